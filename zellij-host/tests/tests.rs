//! `tend-zellij-host`'s integration tests, one binary: recorded zellij
//! output (`fixtures`) and a real zellij (`real_zellij`).

mod fixtures;
mod real_zellij;
