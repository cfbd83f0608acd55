//! For the tests of the stores that carry another one and must implement every method
//! of its traits (a wrapper, the SQL store written once): a check that reads the
//! traits' source.

/// Fails unless `here` (the text of the file that implements them) writes a `fn` for
/// every method of each trait `(source of the trait's file, name, at least so many
/// methods)`: for the stores that must implement every method, the defaulted ones
/// too, because a default left in place would answer for the backend they carry
/// ([`crate::ObservedStore`], the SQL store written once). `who` and `hint` make the
/// failure say what to do.
pub(crate) fn assert_implements_every_method(
    here: &str,
    who: &str,
    hint: &str,
    traits: &[(&str, &str, usize)],
) {
    for (source, name, at_least) in traits {
        let methods = trait_methods(source, name);
        assert!(methods.len() >= *at_least, "{name}: {methods:?}");
        for m in methods {
            assert!(
                here.contains(&format!("fn {m}(")),
                "{who} does not implement {name}::{m}: {hint}"
            );
        }
    }
}

/// The names of the methods of `pub trait {name}` in `source` (its file's text).
fn trait_methods(source: &str, name: &str) -> Vec<String> {
    let start = source
        .find(&format!("pub trait {name}"))
        .expect("the trait is in its file");
    let body = &source[start..];
    let end = body.find("\n}\n").expect("the trait ends");
    body[..end]
        .lines()
        .map(str::trim_start)
        .filter_map(|l| {
            l.strip_prefix("async fn ")
                .or_else(|| l.strip_prefix("fn "))
        })
        .filter_map(|rest| rest.split(['(', '<']).next())
        .map(str::to_string)
        .collect()
}
