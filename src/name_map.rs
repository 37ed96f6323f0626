//! Values filed under names, built once and then only read: the project index's tables.
//!
//! A `HashMap<String, Vec<T>>` costs each name a heap string and a heap list besides its
//! values (about 120 bytes a name); the index files some 300,000 names on the bench corpus.
//! Here a name is a [`Text`] (inline up to 24 bytes), its values a range of one flat list.

use crate::facts::Text;
use crate::hash::HashMap;
use rayon::prelude::*;

/// Names and the values filed under each, in the order they were filed.
pub struct NameMap<T> {
    /// Name -> its position in `starts`.
    ids: HashMap<Text, u32>,
    /// Where each name's values start in `values` (one more entry: the end).
    starts: Vec<u32>,
    values: Vec<T>,
}

impl<T> Default for NameMap<T> {
    fn default() -> Self {
        NameMap {
            ids: HashMap::default(),
            starts: vec![0],
            values: Vec::new(),
        }
    }
}

impl<T> NameMap<T> {
    /// The map of `pairs`: each name's values in the order given.
    pub fn build<S: AsRef<str>>(pairs: impl IntoIterator<Item = (S, T)>) -> NameMap<T> {
        let mut ids: HashMap<Text, u32> = HashMap::default();
        let mut filed: Vec<(u32, T)> = Vec::new();
        for (name, v) in pairs {
            let name = name.as_ref();
            let id = match ids.get(name) {
                Some(&id) => id,
                None => {
                    let id = ids.len() as u32;
                    ids.insert(Text::from(name), id);
                    id
                }
            };
            filed.push((id, v));
        }
        // Stable: a name's values keep their order.
        filed.sort_by_key(|&(id, _)| id);
        let mut starts = Vec::with_capacity(ids.len() + 1);
        starts.push(0);
        for (i, &(id, _)) in filed.iter().enumerate() {
            while starts.len() <= id as usize {
                starts.push(i as u32);
            }
        }
        while starts.len() <= ids.len() {
            starts.push(filed.len() as u32);
        }
        ids.shrink_to_fit();
        // (Collected in place: without the shrink the list would keep the pairs' capacity.)
        let mut values: Vec<T> = filed.into_iter().map(|(_, v)| v).collect();
        values.shrink_to_fit();
        NameMap {
            ids,
            starts,
            values,
        }
    }

    fn slice(&self, id: u32) -> &[T] {
        let id = id as usize;
        &self.values[self.starts[id] as usize..self.starts[id + 1] as usize]
    }

    /// The values filed under `name`, if it is in the map (never an empty list).
    pub fn get(&self, name: &str) -> Option<&[T]> {
        self.ids.get(name).map(|&id| self.slice(id))
    }

    /// The values filed under `name` (none if it is not in the map).
    pub fn named(&self, name: &str) -> &[T] {
        self.get(name).unwrap_or(&[])
    }

    /// Is `name` in the map?
    pub fn contains(&self, name: &str) -> bool {
        self.ids.contains_key(name)
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Every name with its values, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[T])> {
        self.ids.iter().map(|(n, &id)| (n.as_str(), self.slice(id)))
    }

    /// [`Self::iter`], in parallel.
    pub fn par_iter(&self) -> impl ParallelIterator<Item = (&str, &[T])>
    where
        T: Sync,
    {
        self.ids
            .par_iter()
            .map(|(n, &id)| (n.as_str(), self.slice(id)))
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
        let mut all: Vec<(&str, Vec<i32>)> = m.iter().map(|(n, v)| (n, v.to_vec())).collect();
        all.sort();
        assert_eq!(
            all,
            [("a", vec![2, 5]), (long, vec![4]), ("b", vec![1, 3, 6])]
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
}
