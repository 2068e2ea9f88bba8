//! The generated crate's `upgrade` module: the upgrade runtime (`rt_upgrade.rs`, the same file `wiregen migrate`
//! runs) followed by this protocol's [`Plan`](crate::upgrade::Plan) as a constant and the `upgrade` function.

use proc_macro2::TokenStream;
use quote::quote;

use super::{lit, render, Layout};
use crate::emit::EmitError;
use crate::upgrade::Plan;

/// The runtime of the module.
pub(crate) const RT_UPGRADE: &str = include_str!("rt_upgrade.rs");

/// The module's text after the runtime: `PLAN` and `upgrade`.
pub(crate) fn items(plan: &Plan) -> Result<String, EmitError> {
    let (union_field, disc) = (lit(&plan.union_field), lit(&plan.discriminator));
    let events = plan.events.iter().map(|(a, b)| {
        let (a, b) = (lit(a), lit(b));
        quote!((#a, #b))
    });
    let moves = plan.moves.iter().map(|m| {
        let (e, f, t, r) = (lit(&m.event), lit(&m.from), lit(&m.to), m.required);
        quote!(Move { event: #e, from: #f, to: #t, required: #r })
    });
    let renames = plan.renames.iter().map(|r| {
        let event = match &r.event {
            Some(e) => {
                let e = lit(e);
                quote!(::std::option::Option::Some(#e))
            }
            None => quote!(::std::option::Option::None),
        };
        let at = r.at.iter().map(|s| lit(s));
        let (f, t) = (lit(&r.from), lit(&r.to));
        quote!(Rename { event: #event, at: &[#(#at),*], from: #f, to: #t })
    });
    let tokens: TokenStream = quote! {
        /// What a message of the previous version needs (from the schema's `x-renamed-from` and `x-moved-from`).
        pub const PLAN: Plan<'static> = Plan {
            union_field: #union_field,
            discriminator: #disc,
            events: &[#(#events),*],
            moves: &[#(#moves),*],
            renames: &[#(#renames),*],
        };

        /// Upgrades a message of the previous version (parsed JSON) in place to this version, applying [`PLAN`];
        /// the values it could not carry over. Give it what the previous version's readers saw (keys its
        /// stripping objects drop are not part of the message), as `wiregen migrate` does. Validate the result as
        /// usual: what this version rejects (a property it no longer has, a tighter bound) is reported there,
        /// never patched with invented values.
        pub fn upgrade(v: &mut ::serde_json::Value) -> ::std::vec::Vec<Loss> {
            apply(&PLAN, v)
        }
    };
    render(tokens, Layout::RustfmtSkip)
}
