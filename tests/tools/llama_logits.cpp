// llama.cpp's logits for every position of one token sequence as one batch, a line of
// space-separated floats each: what llama_fixture_agreement.py compares between llama.cpp's
// backends. Not part of Kiln's build: compiled against a llama.cpp build on the GPU machine, e.g.
// after `tests/tools/side_by_side_gpu.sh prepare` (L=build-device/llama):
//   g++ -O2 -std=c++17 tests/tools/llama_logits.cpp -I $L/include -I $L/ggml/include -L $L/b/bin \
//       -lllama -lggml -lggml-base -Wl,-rpath,$PWD/$L/b/bin -o /tmp/llama_logits
// Usage: llama_logits MODEL N_GPU_LAYERS TOKENS (comma-separated ids)
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>
#include "llama.h"
int main(int argc, char** argv) {
  if (argc != 4) return 2;
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = std::atoi(argv[2]);
  llama_model* m = llama_model_load_from_file(argv[1], mp);
  if (!m) return 3;
  std::vector<llama_token> toks;
  std::stringstream ss(argv[3]);
  for (std::string t; std::getline(ss, t, ',');) toks.push_back(std::stoi(t));
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = cp.n_batch = cp.n_ubatch = 256;
  llama_context* ctx = llama_init_from_model(m, cp);
  llama_batch b = llama_batch_init(int32_t(toks.size()), 0, 1);
  for (size_t i = 0; i < toks.size(); ++i) {
    b.token[i] = toks[i];
    b.pos[i] = int32_t(i);
    b.n_seq_id[i] = 1;
    b.seq_id[i][0] = 0;
    b.logits[i] = 1;
  }
  b.n_tokens = int32_t(toks.size());
  if (llama_decode(ctx, b)) return 4;
  const int nv = llama_vocab_n_tokens(llama_model_get_vocab(m));
  for (size_t i = 0; i < toks.size(); ++i) {
    const float* l = llama_get_logits_ith(ctx, int32_t(i));
    for (int j = 0; j < nv; ++j) std::printf(j ? " %.7g" : "%.7g", l[j]);
    std::printf("\n");
  }
  llama_batch_free(b);
  return 0;
}
