//! One table per enum: each variant beside its word on the wire, so that
//! serde's spelling, `as_str`, `parse` and `Display` cannot drift apart.

/// Declares a vocabulary enum from its variants and their words:
///
/// ```text
/// words! {
///     /// Doc.
///     pub enum Tap { /// Doc. Pipe = "pipe", }
/// }
/// ```
///
/// The enum is `Copy`, ordered as declared (a band's rank is its order),
/// serialized as its word, and gets `ALL`, `as_str`, `parse` (the exact
/// word) and `Display`. A word earlier releases said for a variant follows
/// its word after `|` (`Relay = "relay" | "psp",`): it is read, by `parse`
/// and serde, never written.
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal $(| $old:literal)*, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            serde::Serialize, serde::Deserialize,
        )]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $word $(, alias = $old)*)] $variant, )+
        }

        impl $name {
            /// Every variant, in order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word on the wire, in tmux options and on the command line.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }

            /// The variant whose word (or an earlier word for it) is
            /// exactly `s`.
            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    $($word $(| $old)* => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    words! {
        /// A sample.
        pub enum Sample {
            /// One.
            One = "one",
            /// Two words.
            TwoWords = "two_words",
        }
    }

    #[test]
    fn the_word_is_the_same_everywhere() {
        for s in Sample::ALL {
            let json = serde_json::to_string(s).expect("serializes");
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(s.to_string(), s.as_str());
            assert_eq!(Sample::parse(s.as_str()), Some(*s));
            let back: Sample = serde_json::from_str(&json).expect("reads");
            assert_eq!(back, *s);
        }
        assert_eq!(Sample::parse("One"), None);
        assert!(serde_json::from_str::<Sample>("\"three\"").is_err());
        assert!(Sample::One < Sample::TwoWords, "ordered as declared");
        // Padded like text in tables.
        assert_eq!(format!("[{:<5}]", Sample::One), "[one  ]");
    }
}
