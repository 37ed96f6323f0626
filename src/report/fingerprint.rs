//! `primaryLocationLineHash`, computed the way GitHub's `upload-sarif` action computes it
//! (codeql-action `fingerprints.ts`): a rolling hash (base 37, 64-bit wrapping) over the
//! first 100 UTF-16 code units of the file from the start of each line, skipping spaces and
//! tabs and normalising line endings to `\n`, with an occurrence counter for identical hashes.
//! Computing it here means the upload action keeps ours instead of hashing the file again,
//! and the value does not change when unrelated lines move.

use crate::hash::HashMap;

const BLOCK_SIZE: usize = 100;
const MOD: u64 = 37;
const EOF: u64 = 65535;

/// `hash:count` for every line (1-based) of `text`.
pub fn line_hashes(text: &str) -> HashMap<usize, String> {
    let first_mod = (0..BLOCK_SIZE).fold(1u64, |m, _| m.wrapping_mul(MOD));
    let mut window = [0u64; BLOCK_SIZE];
    let mut line_numbers = [-1i64; BLOCK_SIZE];
    let mut hash_raw: u64 = 0;
    let mut index = 0usize;
    let mut line_number = 0i64;
    let mut line_start = true;
    let mut prev_cr = false;
    let mut counts: HashMap<String, usize> = HashMap::default();
    let mut out: HashMap<usize, String> = HashMap::default();

    let mut output = |hash_raw: u64, line: i64, counts: &mut HashMap<String, usize>| {
        let v = format!("{hash_raw:x}");
        let n = counts.entry(v.clone()).or_insert(0);
        *n += 1;
        out.insert(line as usize, format!("{v}:{n}"));
    };
    let update =
        |current: u64, hash_raw: &mut u64, window: &mut [u64; BLOCK_SIZE], index: &mut usize| {
            let begin = window[*index];
            window[*index] = current;
            *hash_raw = MOD
                .wrapping_mul(*hash_raw)
                .wrapping_add(current)
                .wrapping_sub(first_mod.wrapping_mul(begin));
            *index = (*index + 1) % BLOCK_SIZE;
        };

    let units = text
        .encode_utf16()
        .map(u64::from)
        .chain(std::iter::once(EOF));
    for c in units {
        let mut current = c;
        if current == u64::from(b' ')
            || current == u64::from(b'\t')
            || (prev_cr && current == u64::from(b'\n'))
        {
            prev_cr = false;
            continue;
        }
        if current == u64::from(b'\r') {
            current = u64::from(b'\n');
            prev_cr = true;
        } else {
            prev_cr = false;
        }
        if line_numbers[index] != -1 {
            output(hash_raw, line_numbers[index], &mut counts);
            line_numbers[index] = -1;
        }
        if line_start {
            line_start = false;
            line_number += 1;
            line_numbers[index] = line_number;
        }
        if current == u64::from(b'\n') {
            line_start = true;
        }
        update(current, &mut hash_raw, &mut window, &mut index);
    }
    for _ in 0..BLOCK_SIZE {
        if line_numbers[index] != -1 {
            output(hash_raw, line_numbers[index], &mut counts);
            line_numbers[index] = -1;
        }
        update(0, &mut hash_raw, &mut window, &mut index);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Published vectors of the upload action's own tests (codeql-action fingerprints.test.ts).
    #[test]
    fn matches_the_upload_action() {
        let check = |input: &str, want: &[&str]| {
            let h = line_hashes(input);
            let got: Vec<&str> = (1..=want.len()).map(|l| h[&l].as_str()).collect();
            assert_eq!(got, want, "{input:?}");
            assert_eq!(h.len(), want.len(), "{input:?}");
        };
        check("", &["c129715d7a2bc9a3:1"]);
        check(
            " a\nb\n  \t\tc\n d",
            &[
                "271789c17abda88f:1",
                "54703d4cd895b18:1",
                "180aee12dab6264:1",
                "a23a3dc5e078b07b:1",
            ],
        );
        let lf = &[
            "e9496ae3ebfced30:1",
            "fb7c023a8b9ccb3f:1",
            "ce8ba1a563dcdaca:1",
            "e20e36e16fcb0cc8:1",
            "b3edc88f2938467e:1",
            "c8e28b0b4002a3a0:1",
            "c129715d7a2bc9a3:1",
        ];
        check(" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n", lf);
        check(" hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r", lf);
        check(
            " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
            lf,
        );
        check(
            " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
            &[
                "8b7cf3e952e7aeb2:1",
                "b1ae1287ec4718d9:1",
                "bff680108adb0fcc:1",
                "c6805c5e1288b612:1",
                "b86d3392aea1be30:1",
                "e6ceba753e1a442:1",
            ],
        );
    }

    #[test]
    fn moving_unrelated_lines_keeps_the_hash() {
        let a = "class A {\n  void f() {\n    String k = UUID.randomUUID().toString();\n  }\n}\n";
        let b = format!("// header\n\n{a}");
        let ha = line_hashes(a);
        let hb = line_hashes(&b);
        assert_eq!(ha[&3], hb[&5]);
        assert_ne!(ha[&3], ha[&2]);
    }

    #[test]
    fn whitespace_and_line_endings_do_not_matter() {
        let unix = line_hashes("a b\nc\n");
        let dos = line_hashes("a\tb\r\nc\r\n");
        assert_eq!(unix[&1], dos[&1]);
        assert_eq!(unix[&2], dos[&2]);
    }

    #[test]
    fn identical_lines_are_counted() {
        // Identical tails: the last lines of the file hash alike only if everything after them is alike.
        let h = line_hashes("x\nx\n");
        assert!(h[&1].ends_with(":1"));
        assert!(h.contains_key(&2));
    }
}
