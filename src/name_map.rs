//! Values filed under names, built once and then only read: the project index's tables.
//!
//! A `HashMap<String, Vec<T>>` costs each name a heap string and a heap list besides its
//! values (about 120 bytes a name), and a `HashMap<CompactString, u32>` still 32 bytes a
//! bucket at half load; the index files some 280,000 names on the bench corpus. Here the
//! names are one string, the table holds 4-byte ids, and a name's values are a range of one
//! flat list.

use rayon::prelude::*;
use std::hash::BuildHasher;

/// Names and the values filed under each, in the order they were filed.
pub struct NameMap<T> {
    /// The names, one after another, in the order first filed (a name's id).
    text: String,
    /// Where each name ends in `text` (it starts where the one before ends).
    ends: Vec<u32>,
    /// Ids, found by their name's hash.
    table: hashbrown::HashTable<u32>,
    /// Where each name's values start in `values` (one more entry: the end).
    starts: Vec<u32>,
    values: Vec<T>,
}

fn hash(name: &str) -> u64 {
    foldhash::fast::FixedState::default().hash_one(name)
}

/// Name `id` of `text`, given where each name ends.
fn name_at<'t>(text: &'t str, ends: &[u32], id: u32) -> &'t str {
    let id = id as usize;
    let start = if id == 0 { 0 } else { ends[id - 1] as usize };
    &text[start..ends[id] as usize]
}

impl<T> Default for NameMap<T> {
    fn default() -> Self {
        NameMap {
            text: String::new(),
            ends: Vec::new(),
            table: hashbrown::HashTable::new(),
            starts: vec![0],
            values: Vec::new(),
        }
    }
}

impl<T> NameMap<T> {
    /// The map of `pairs`: each name's values in the order given.
    pub fn build<S: AsRef<str>>(pairs: impl IntoIterator<Item = (S, T)>) -> NameMap<T> {
        let mut text = String::new();
        let mut ends: Vec<u32> = Vec::new();
        let mut table: hashbrown::HashTable<u32> = hashbrown::HashTable::new();
        let mut filed: Vec<(u32, T)> = Vec::new();
        for (name, v) in pairs {
            let name = name.as_ref();
            let h = hash(name);
            let id = match table.find(h, |&id| name_at(&text, &ends, id) == name) {
                Some(&id) => id,
                None => {
                    let id = ends.len() as u32;
                    text.push_str(name);
                    ends.push(text.len() as u32);
                    table.insert_unique(h, id, |&id| hash(name_at(&text, &ends, id)));
                    id
                }
            };
            filed.push((id, v));
        }
        // Stable: a name's values keep their order.
        filed.sort_by_key(|&(id, _)| id);
        let mut starts = Vec::with_capacity(ends.len() + 1);
        starts.push(0);
        for (i, &(id, _)) in filed.iter().enumerate() {
            while starts.len() <= id as usize {
                starts.push(i as u32);
            }
        }
        while starts.len() <= ends.len() {
            starts.push(filed.len() as u32);
        }
        text.shrink_to_fit();
        ends.shrink_to_fit();
        table.shrink_to_fit(|&id| hash(name_at(&text, &ends, id)));
        // (Collected in place: without the shrink the list would keep the pairs' capacity.)
        let mut values: Vec<T> = filed.into_iter().map(|(_, v)| v).collect();
        values.shrink_to_fit();
        NameMap {
            text,
            ends,
            table,
            starts,
            values,
        }
    }

    fn name(&self, id: u32) -> &str {
        name_at(&self.text, &self.ends, id)
    }

    fn slice(&self, id: u32) -> &[T] {
        let id = id as usize;
        &self.values[self.starts[id] as usize..self.starts[id + 1] as usize]
    }

    fn id(&self, name: &str) -> Option<u32> {
        self.table
            .find(hash(name), |&id| self.name(id) == name)
            .copied()
    }

    /// The values filed under `name`, if it is in the map (never an empty list).
    pub fn get(&self, name: &str) -> Option<&[T]> {
        self.id(name).map(|id| self.slice(id))
    }

    /// The values filed under `name` (none if it is not in the map).
    pub fn named(&self, name: &str) -> &[T] {
        self.get(name).unwrap_or(&[])
    }

    /// Is `name` in the map?
    pub fn contains(&self, name: &str) -> bool {
        self.id(name).is_some()
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Every name with its values, in the order the names were first filed.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[T])> {
        (0..self.len() as u32).map(|id| (self.name(id), self.slice(id)))
    }

    /// [`Self::iter`], in parallel.
    pub fn par_iter(&self) -> impl IndexedParallelIterator<Item = (&str, &[T])>
    where
        T: Sync,
    {
        (0..self.len() as u32)
            .into_par_iter()
            .map(|id| (self.name(id), self.slice(id)))
    }
}

impl<T: Copy> NameMap<T> {
    /// Orders each name's values by `key`, keeping the order of equal ones.
    pub fn sort_each_by_key<K: Ord>(&mut self, key: impl Fn(&T) -> K) {
        for w in self.starts.windows(2) {
            self.values[w[0] as usize..w[1] as usize].sort_by_key(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_keeps_its_values_in_order() {
        let long = "a_name_longer_than_twenty_four_bytes";
        let m = NameMap::build([("b", 1), ("a", 2), ("b", 3), (long, 4), ("a", 5), ("b", 6)]);
        assert_eq!(m.get("b"), Some(&[1, 3, 6][..]));
        assert_eq!(m.get("a"), Some(&[2, 5][..]));
        assert_eq!(m.named(long), &[4]);
        assert_eq!(m.get("c"), None);
        assert_eq!(m.named("c"), &[] as &[i32]);
        assert!(m.contains("a") && !m.contains("c"));
        assert_eq!(m.len(), 3);
        // In the order the names were first filed.
        let all: Vec<(&str, Vec<i32>)> = m.iter().map(|(n, v)| (n, v.to_vec())).collect();
        assert_eq!(
            all,
            [("b", vec![1, 3, 6]), ("a", vec![2, 5]), (long, vec![4])]
        );
        assert_eq!(m.par_iter().count(), 3);
        let empty: NameMap<u32> = NameMap::build(Vec::<(&str, u32)>::new());
        assert!(empty.is_empty() && empty.get("a").is_none());
        assert!(NameMap::<u8>::default().get("").is_none());
    }

    #[test]
    fn sorting_keeps_equal_values_in_order() {
        let mut m = NameMap::build([
            ("m", (2, 'a')),
            ("m", (1, 'b')),
            ("m", (2, 'c')),
            ("n", (0, 'd')),
        ]);
        m.sort_each_by_key(|&(owner, _)| owner);
        assert_eq!(m.named("m"), &[(1, 'b'), (2, 'a'), (2, 'c')]);
        assert_eq!(m.named("n"), &[(0, 'd')]);
    }

    /// Many names (the table grows, then shrinks to fit): each is found with its values, and
    /// names that were not filed are not, prefixes and extensions of filed ones included.
    #[test]
    fn many_names() {
        let name = |i: usize| format!("name{i}");
        let m = NameMap::build((0..20_000).flat_map(|i| [(name(i % 10_000), i)]));
        assert_eq!(m.len(), 10_000);
        for i in 0..10_000 {
            assert_eq!(m.named(&name(i)), &[i, i + 10_000]);
        }
        for missing in ["name", "name10000", "name1x", "", "ame1"] {
            assert!(m.get(missing).is_none(), "{missing}");
        }
        assert_eq!(m.iter().next(), Some(("name0", &[0, 10_000][..])));
    }
}
