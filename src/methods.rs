//! The project's methods by name and owner type (simple names), for resolving a call on a
//! type (`Project::resolve_on_type`). Owner names are stored once and each method name keeps
//! one list of (owner, method), instead of a map of owners per method name: on the bench
//! corpus that map took 34 MB for 106,000 methods.

use crate::hash::HashMap;

/// Methods (`M`: the project's function reference) by name and owner name.
pub struct Methods<M> {
    /// Owner name -> its id.
    ids: HashMap<String, u32>,
    /// Id -> owner name.
    owners: Vec<String>,
    /// Method name -> (owner id, method), by owner id, then in the order they were added.
    by_name: HashMap<String, Vec<(u32, M)>>,
}

impl<M> Default for Methods<M> {
    fn default() -> Self {
        Methods {
            ids: HashMap::default(),
            owners: Vec::new(),
            by_name: HashMap::default(),
        }
    }
}

impl<M: Copy> Methods<M> {
    /// Files method `r`, named `name`, under owner type `owner`.
    pub fn push(&mut self, name: &str, owner: &str, r: M) {
        let id = match self.ids.get(owner) {
            Some(&id) => id,
            None => {
                let id = self.owners.len() as u32;
                self.ids.insert(owner.to_string(), id);
                self.owners.push(owner.to_string());
                id
            }
        };
        match self.by_name.get_mut(name) {
            Some(v) => v.push((id, r)),
            None => {
                self.by_name.insert(name.to_string(), vec![(id, r)]);
            }
        }
    }

    /// Orders each name's list by owner (keeping the order methods were added in per owner);
    /// called once every method is in.
    pub fn finish(&mut self) {
        for v in self.by_name.values_mut() {
            v.sort_by_key(|&(id, _)| id);
            v.shrink_to_fit();
        }
        self.owners.shrink_to_fit();
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
        let mut m = Methods::default();
        m.push("run", "Job", f(0, 1));
        m.push("run", "Task", f(1, 0));
        m.push("run", "Job", f(2, 3));
        m.push("stop", "Job", f(0, 2));
        m.finish();
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
