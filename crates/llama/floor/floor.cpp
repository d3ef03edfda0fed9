// judgelab-floor: the best prefill this machine does, with llama.cpp built for its own
// instruction set. It decodes each prompt whole, one sequence on a cleared cache (as
// llama-bench measures prompt processing), as `judgelab_llama::bench::plain_prefill` does
// over Judgelab's portable build, so that the two floors differ only in the build. The
// first prompt is decoded once untimed first (a warm-up). `judgelab bench` divides the
// least work of a sweep by this speed.
//
// usage: judgelab-floor MODEL.gguf TOKENS.txt THREADS
//   TOKENS.txt: one prompt a line, its token ids separated by spaces.
// prints one JSON line: {"tokens":N,"seconds":S,"system_info":"..."}

#include "llama.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static void quiet(ggml_log_level level, const char * text, void *) {
    if (level >= GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

static std::string json_escaped(const std::string & s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

int main(int argc, char ** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODEL.gguf TOKENS.txt THREADS\n", argv[0]);
        return 2;
    }
    std::vector<std::vector<llama_token>> prompts;
    std::ifstream file(argv[2]);
    if (!file) {
        fprintf(stderr, "error: cannot read %s\n", argv[2]);
        return 2;
    }
    size_t longest = 1;
    for (std::string line; std::getline(file, line);) {
        std::istringstream ids(line);
        std::vector<llama_token> tokens;
        for (llama_token id; ids >> id;) {
            tokens.push_back(id);
        }
        if (!tokens.empty()) {
            longest = std::max(longest, tokens.size());
            prompts.push_back(std::move(tokens));
        }
    }
    if (prompts.empty()) {
        fprintf(stderr, "error: %s holds no prompt\n", argv[2]);
        return 2;
    }
    const int threads = std::atoi(argv[3]);

    llama_log_set(quiet, nullptr);
    llama_backend_init();
    llama_model_params mparams = llama_model_default_params();
    mparams.progress_callback = [](float, void *) { return true; };
    llama_model * model = llama_model_load_from_file(argv[1], mparams);
    if (!model) {
        fprintf(stderr, "error: cannot load %s\n", argv[1]);
        return 1;
    }
    llama_context_params cparams = llama_context_default_params();
    cparams.n_ctx = static_cast<uint32_t>(longest + 16);
    cparams.n_batch = static_cast<uint32_t>(longest + 16);
    cparams.n_threads = threads;
    cparams.n_threads_batch = threads;
    llama_context * ctx = llama_init_from_model(model, cparams);
    if (!ctx) {
        fprintf(stderr, "error: cannot create a context of %zu tokens\n", longest + 16);
        return 1;
    }
    llama_memory_t memory = llama_get_memory(ctx);
    llama_batch batch = llama_batch_init(static_cast<int32_t>(longest + 16), 0, 1);

    // Decodes a whole prompt on a cleared cache; false if llama.cpp fails.
    auto decode = [&](const std::vector<llama_token> & tokens) {
        llama_memory_clear(memory, true);
        batch.n_tokens = 0;
        for (size_t pos = 0; pos < tokens.size(); pos++) {
            const int32_t i = batch.n_tokens++;
            batch.token[i] = tokens[pos];
            batch.pos[i] = static_cast<llama_pos>(pos);
            batch.n_seq_id[i] = 1;
            batch.seq_id[i][0] = 0;
            batch.logits[i] = pos + 1 == tokens.size();
        }
        // Reading the logits waits for the decode to finish on every backend.
        return llama_decode(ctx, batch) == 0 &&
               llama_get_logits_ith(ctx, batch.n_tokens - 1) != nullptr;
    };
    auto failed = []() {
        fprintf(stderr, "error: llama_decode failed\n");
        return 1;
    };

    if (!decode(prompts[0])) {
        return failed();
    }
    size_t n_tokens = 0;
    double seconds = 0.0;
    for (const auto & tokens : prompts) {
        const auto start = std::chrono::steady_clock::now();
        if (!decode(tokens)) {
            return failed();
        }
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        n_tokens += tokens.size();
    }
    printf("{\"tokens\":%zu,\"seconds\":%.6f,\"system_info\":\"%s\"}\n", n_tokens, seconds,
           json_escaped(llama_print_system_info()).c_str());

    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
