fn main() {
    std::process::exit(lspgate::run(std::env::args_os()));
}
