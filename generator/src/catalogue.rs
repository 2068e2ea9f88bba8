//! `catalogue!`: the one definition of every catalogue enum (message rules, schema change rules, the service's error
//! codes, schema diagnostic kinds, outputs).
//!
//! Each variant is written once, with its stable id, and the macro derives the enum (`#[non_exhaustive]`), its
//! `ALL` slice in definition order, the id accessor and the parser from an id. A new variant therefore cannot be
//! forgotten in `ALL` or in the parser, and two variants with one id make the parser's `match` hold an
//! unreachable pattern, which the workspace's `-D warnings` gate rejects (the tests below check it too).
//!
//! ```text
//! catalogue! {
//!     /// What the enum is.
//!     #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
//!     pub enum Rule {
//!         /// Doc of `ALL`.
//!         const ALL;
//!         /// Doc of the id accessor.
//!         fn id;
//!         /// Doc of the parser.
//!         fn from_id;
//!         /// Doc of the variant.
//!         MalformedJson = "malformed-json",
//!     }
//! }
//! ```

macro_rules! catalogue {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(#[$all_doc:meta])*
            const ALL;
            $(#[$id_doc:meta])*
            fn $id:ident;
            $(#[$from_doc:meta])*
            fn $from:ident;
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $code:literal,
            )+
        }
    ) => {
        $(#[$meta])*
        #[non_exhaustive]
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant,
            )+
        }

        impl $name {
            $(#[$all_doc])*
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            $(#[$id_doc])*
            pub fn $id(self) -> &'static str {
                match self {
                    $($name::$variant => $code,)+
                }
            }

            $(#[$from_doc])*
            pub fn $from(s: &str) -> Option<$name> {
                match s {
                    $($code => Some($name::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

pub(crate) use catalogue;

#[cfg(test)]
mod tests {
    /// Every id is unique within its catalogue and parses back to its variant.
    fn check<T: Copy + PartialEq + std::fmt::Debug>(all: &[T], id: fn(T) -> &'static str, from: fn(&str) -> Option<T>) {
        let mut ids: Vec<&str> = all.iter().map(|v| id(*v)).collect();
        for v in all {
            assert_eq!(from(id(*v)), Some(*v), "{v:?}");
        }
        assert_eq!(from("no such id"), None);
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len(), "duplicate ids");
    }

    #[test]
    fn every_catalogue_round_trips_with_unique_ids() {
        use crate::diag::SchemaErrorKind;
        use crate::emit::Output;
        use crate::rules::Rule;
        check(Rule::ALL, Rule::id, Rule::from_id);
        check(SchemaErrorKind::ALL, SchemaErrorKind::code, SchemaErrorKind::from_code);
        check(Output::ALL, Output::name, Output::from_name);
        #[cfg(feature = "serve")]
        check(crate::serve::ErrorCode::ALL, crate::serve::ErrorCode::id, crate::serve::ErrorCode::from_id);
    }
}
