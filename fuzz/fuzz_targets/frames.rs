//! The LSP frame reader on arbitrary bytes, as a server's stdout could hold: it must
//! never panic and never stall, whatever the headers, lengths and bodies say.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = lspgate::lsp::transport::fuzz_frames(data);
});
