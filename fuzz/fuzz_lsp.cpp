// Fuzz target: the language server's message framing and dispatch. The input is the whole byte stream a client
// sends; the server must answer bad frames with JSON-RPC errors and end cleanly at end of input.
#include <sys/mman.h>
#include <unistd.h>

#include <fcntl.h>
#include <cstddef>
#include <cstdint>

#include "integrations/lsp/server.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // A memory file holds the input whatever its size (a pipe would block past its buffer).
    const int in = memfd_create("lsp-fuzz-input", 0);
    const int out = open("/dev/null", O_WRONLY);
    if (in < 0 || out < 0) return 0;
    std::size_t written = 0;
    while (written < size) {
        const ssize_t n = write(in, data + written, size - written);
        if (n <= 0) break;
        written += static_cast<std::size_t>(n);
    }
    lseek(in, 0, SEEK_SET);
    mbl::lsp::ServerOptions options;
    options.debounce = std::chrono::milliseconds(0);
    options.max_message_bytes = 1u << 20;
    {
        mbl::lsp::Server server(options, in, out);
        (void)server.run();
    }
    close(in);
    close(out);
    return 0;
}
