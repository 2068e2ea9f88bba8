//! Zod 4 expressions as typed values: the emitter builds a [`Zod`] from the model, and only [`Zod::render`] turns
//! it into source, with every literal through [`super::js`].

use super::super::EmitError;
use super::js::{int_lit, number_lit, string_lit, Code};

/// The largest integer JavaScript represents exactly (2^53-1); `z.int()` checks this range by itself.
pub(crate) const MAX_SAFE: i64 = 9_007_199_254_740_991;

/// A Zod schema expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Zod {
    /// A string of at least `min_len` characters (code points, like the engine).
    String {
        /// Minimum length; `0` for none.
        min_len: u64,
    },
    /// A whole number within `[min, max]`.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// A finite number, optionally bounded below.
    Number {
        /// Smallest allowed value.
        min: Option<f64>,
    },
    /// `true` or `false`.
    Boolean,
    /// Exactly this string.
    Literal(String),
    /// One of these strings.
    Enum(Vec<String>),
    /// Another generated schema, by its (checked) identifier.
    Ref(Code),
    /// Any JSON object, not inspected: a record of unknown.
    AnyObject,
    /// Absent, or the inner schema (never `null`).
    Optional(Box<Zod>),
    /// The inner schema with a description (`.describe()`, Zod's registry; used by `z.toJSONSchema`).
    Described(Box<Zod>, String),
}

impl Zod {
    /// Wraps in [`Zod::Optional`] unless `required`.
    pub fn optional_unless(self, required: bool) -> Zod {
        if required {
            self
        } else {
            Zod::Optional(Box::new(self))
        }
    }

    /// Wraps in [`Zod::Described`] when `description` is not empty.
    pub fn described(self, description: &str) -> Zod {
        if description.is_empty() {
            self
        } else {
            Zod::Described(Box::new(self), description.to_string())
        }
    }

    /// A name for this schema when it is a primitive worth sharing between fields (`$nonEmptyString`,
    /// `$intFrom0`), or `None`. Fields with equal primitive types share one instance, as a hand-written schema
    /// shares its `id` or `uint53`, which keeps Zod's call sites monomorphic.
    pub fn shared_name(&self) -> Option<String> {
        let num = |n: f64| {
            let s = format!("{}", n.abs()).replace(['.', '+', '-'], "_");
            if n < 0.0 {
                format!("Neg{s}")
            } else {
                s
            }
        };
        Some(match self {
            Zod::String { min_len: 0 } => "$string".into(),
            Zod::String { min_len: 1 } => "$nonEmptyString".into(),
            Zod::String { min_len } => format!("$stringOf{min_len}"),
            Zod::Int { min, max } => {
                let mut s = String::from("$int");
                if *min > -MAX_SAFE {
                    s.push_str(&format!("From{}", num(*min as f64)));
                }
                if *max < MAX_SAFE {
                    s.push_str(&format!("To{}", num(*max as f64)));
                }
                s
            }
            Zod::Number { min: None } => "$number".into(),
            Zod::Number { min: Some(m) } => format!("$numberFrom{}", num(*m)),
            Zod::Boolean => "$boolean".into(),
            Zod::AnyObject => "$record".into(),
            _ => return None,
        })
    }

    /// Whether rendering uses the `minChars` helper.
    pub fn uses_min_chars(&self) -> bool {
        match self {
            Zod::String { min_len } => *min_len > 1,
            Zod::Optional(z) | Zod::Described(z, _) => z.uses_min_chars(),
            _ => false,
        }
    }

    /// The TypeScript source of this expression. `T` and `C` are the runtime's parameters for types (the shared
    /// error map) and checks (the error map, and abort on failure).
    ///
    /// # Errors
    /// [`EmitError::Unsupported`] for what JavaScript cannot check exactly: integer bounds beyond ±(2^53-1), a
    /// non-finite bound, an empty enum.
    pub fn render(&self) -> Result<Code, EmitError> {
        let s = match self {
            Zod::String { min_len: 0 } => "z.string(T)".to_string(),
            // `.min(1)` counts UTF-16 code units, which agrees with code points for "non-empty".
            Zod::String { min_len: 1 } => "z.string(T).min(1, C)".to_string(),
            Zod::String { min_len } => {
                let n = i64::try_from(*min_len).ok().filter(|n| *n <= MAX_SAFE).ok_or_else(|| {
                    EmitError::Unsupported(format!(
                        "a minimum length of {min_len} is beyond what JavaScript counts exactly"
                    ))
                })?;
                format!("minChars({})", int_lit(n))
            }
            Zod::Int { min, max } => {
                if *min < -MAX_SAFE || *max > MAX_SAFE {
                    return Err(EmitError::Unsupported(format!(
                        "integer bounds {min}..{max} go beyond ±(2^53-1), which JavaScript cannot check exactly"
                    )));
                }
                let mut s = "z.int(C)".to_string();
                if *min > -MAX_SAFE {
                    s.push_str(&format!(".min({}, C)", int_lit(*min)));
                }
                if *max < MAX_SAFE {
                    s.push_str(&format!(".max({}, C)", int_lit(*max)));
                }
                s
            }
            Zod::Number { min: None } => "z.number(T)".to_string(),
            Zod::Number { min: Some(m) } => format!("z.number(T).min({}, C)", number_lit(*m)?),
            Zod::Boolean => "z.boolean(T)".to_string(),
            Zod::Literal(v) => format!("z.literal({})", string_lit(v)),
            Zod::Enum(values) => {
                if values.is_empty() {
                    return Err(EmitError::Unsupported("an enum without values".into()));
                }
                let lits: Vec<Code> = values.iter().map(|v| string_lit(v)).collect();
                format!("z.enum([{}], T)", Code::join(&lits, ", "))
            }
            Zod::Ref(name) => name.to_string(),
            Zod::AnyObject => "z.record(z.string(), z.unknown(), T)".to_string(),
            Zod::Optional(inner) => format!("{}.optional()", inner.render()?),
            Zod::Described(inner, d) => format!("{}.describe({})", inner.render()?, string_lit(d)),
        };
        Ok(Code::from_pieces(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(z: Zod) -> String {
        z.render().expect("renders").to_string()
    }

    #[test]
    fn renders_each_construct() {
        assert_eq!(r(Zod::String { min_len: 1 }), "z.string(T).min(1, C)");
        assert_eq!(r(Zod::String { min_len: 3 }), "minChars(3)");
        assert_eq!(r(Zod::Int { min: 0, max: MAX_SAFE }), "z.int(C).min(0, C)");
        assert_eq!(r(Zod::Int { min: -MAX_SAFE, max: 10 }), "z.int(C).max(10, C)");
        assert_eq!(r(Zod::Number { min: Some(0.0) }), "z.number(T).min(0, C)");
        assert_eq!(r(Zod::Enum(vec!["a\"b".into(), "`${c}`".into()])), "z.enum([\"a\\\"b\", \"`${c}`\"], T)");
        assert_eq!(
            r(Zod::Boolean.optional_unless(false).described("x */ y")),
            "z.boolean(T).optional().describe(\"x */ y\")"
        );
    }

    #[test]
    fn refuses_what_javascript_cannot_check() {
        assert!(Zod::Int { min: 0, max: i64::MAX }.render().is_err());
        assert!(Zod::Number { min: Some(f64::INFINITY) }.render().is_err());
        assert!(Zod::Enum(vec![]).render().is_err());
    }
}
