//! The project's methods by name and owner type (simple names), for resolving a call on a
//! type (`Project::resolve_on_type`). Owner names are stored once and each method name keeps
//! one list of (owner, method), instead of a map of owners per method name: on the bench
//! corpus that map took 34 MB for 106,000 methods.

use crate::facts::Text;
use crate::hash::HashMap;
use crate::name_map::NameMap;

/// Methods (`M`: the project's function reference) by name and owner name.
pub struct Methods<M> {
    /// Owner name -> its id.
    ids: HashMap<Text, u32>,
    /// Id -> owner name.
    owners: Vec<Text>,
    /// Method name -> (owner id, method), by owner id, then in the order they were given.
    by_name: NameMap<(u32, M)>,
}

impl<M> Default for Methods<M> {
    fn default() -> Self {
        Methods {
            ids: HashMap::default(),
            owners: Vec::new(),
            by_name: NameMap::default(),
        }
    }
}

impl<M: Copy> Methods<M> {
    /// The methods of `entries`: (method name, owner type name, method).
    pub fn build<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str, M)>) -> Methods<M> {
        let mut ids: HashMap<Text, u32> = HashMap::default();
        let mut owners: Vec<Text> = Vec::new();
        let mut by_name = NameMap::build(entries.into_iter().map(|(name, owner, r)| {
            let id = match ids.get(owner) {
                Some(&id) => id,
                None => {
                    let id = owners.len() as u32;
                    ids.insert(Text::from(owner), id);
                    owners.push(Text::from(owner));
                    id
                }
            };
            (name, (id, r))
        }));
        by_name.sort_each_by_key(|&(id, _)| id);
        owners.shrink_to_fit();
        Methods {
            ids,
            owners,
            by_name,
        }
    }

    /// The methods named `name` of owner `owner`, in the order they were added.
    pub fn on(&self, name: &str, owner: &str) -> &[(u32, M)] {
        let (Some(v), Some(&id)) = (self.by_name.get(name), self.ids.get(owner)) else {
            return &[];
        };
        let start = v.partition_point(|&(o, _)| o < id);
        let end = v.partition_point(|&(o, _)| o <= id);
        &v[start..end]
    }

    /// How many owners declare a method named `name`.
    pub fn owner_count(&self, name: &str) -> usize {
        self.by_name.get(name).map_or(0, |v| {
            v.iter()
                .enumerate()
                .filter(|&(i, &(o, _))| i == 0 || v[i - 1].0 != o)
                .count()
        })
    }

    /// Every (owner name, method) named `name`, by owner.
    pub fn named(&self, name: &str) -> impl Iterator<Item = (&str, M)> + '_ {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(|&(o, r)| (self.owners[o as usize].as_str(), r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_by_name_and_owner() {
        let f = |unit: usize, f: usize| (unit, f);
        let m = Methods::build([
            ("run", "Job", f(0, 1)),
            ("run", "Task", f(1, 0)),
            ("run", "Job", f(2, 3)),
            ("stop", "Job", f(0, 2)),
        ]);
        let on = |name, owner| m.on(name, owner).iter().map(|x| x.1).collect::<Vec<_>>();
        assert_eq!(on("run", "Job"), [f(0, 1), f(2, 3)]);
        assert_eq!(on("run", "Task"), [f(1, 0)]);
        assert!(on("run", "Other").is_empty() && on("go", "Job").is_empty());
        assert_eq!(m.owner_count("run"), 2);
        assert_eq!(m.owner_count("go"), 0);
        let named: Vec<(&str, (usize, usize))> = m.named("run").collect();
        assert_eq!(
            named,
            [("Job", f(0, 1)), ("Job", f(2, 3)), ("Task", f(1, 0))]
        );
    }
}
