//! `tend-detector`'s integration tests, one binary: each module was a test
//! file of its own (the corpus replayed against its labels, identity,
//! property tests of bad input, …). Pick one with its path as the filter:
//! `cargo test -p tend-detector --test tests corpus:: -- --skip _corpus::`.

mod bad_input;
mod channel_survey;
mod corpus;
mod engine_runs;
mod eval_backoff;
mod identity_corpus;
mod limit_corpus;
mod manifest_examples;
mod psp_engine;
mod resize;
mod rules_memo;
mod screen_identity;
mod unrecognised;
mod wrapper_corpus;
