// Reading llama.cpp's GGUF files: header, keys, tensors, the derived config, and the weights
// themselves checked against the safetensors checkpoint they were converted from.
#include <QtTest>
#include <cmath>
#include <set>

#include "gguf_fixtures.h"
#include "kiln/types.h"
#include "model/checkpoint.h"
#include "model/gguf_checkpoint.h"
#include "model/gguf_file.h"
#include "quant/convert.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<float> to_floats(const TensorView& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  const int64_t cols = t.shape.back();
  std::vector<float> out(static_cast<size_t>(n));
  const size_t stride = row_bytes(t.dtype, cols);
  for (int64_t r = 0; r < n / cols; ++r) dequantize_row(t.dtype, t.data + r * stride, cols, out.data() + r * cols);
  return out;
}

double relative_error(const std::vector<float>& ours, const std::vector<float>& ref) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    diff += double(ours[i] - ref[i]) * (ours[i] - ref[i]);
    norm += double(ref[i]) * ref[i];
  }
  return std::sqrt(diff / norm);
}

Gemma3Config safetensors_config(const std::string& name) {
  return parse_gemma3_config(read_file_bytes(folder_path(name) + "/config.json"), folder_path(name) + "/config.json");
}

void compare_configs(const Gemma3Config& g, const Gemma3Config& s, bool same_scale) {
  QCOMPARE(g.vocab_size, s.vocab_size);
  QCOMPARE(g.hidden_size, s.hidden_size);
  QCOMPARE(g.intermediate_size, s.intermediate_size);
  QCOMPARE(g.num_layers, s.num_layers);
  QCOMPARE(g.num_heads, s.num_heads);
  QCOMPARE(g.num_kv_heads, s.num_kv_heads);
  QCOMPARE(g.head_dim, s.head_dim);
  QCOMPARE(g.sliding_window, s.sliding_window);
  QCOMPARE(g.max_position_embeddings, s.max_position_embeddings);
  if (same_scale) QCOMPARE(g.query_pre_attn_scalar, s.query_pre_attn_scalar);
  QVERIFY(std::abs(g.rms_norm_eps - s.rms_norm_eps) < 1e-12);
  QCOMPARE(g.rope_theta, s.rope_theta);
  QCOMPARE(g.rope_local_base_freq, s.rope_local_base_freq);
  QCOMPARE(g.rope_scaling_factor, s.rope_scaling_factor);
  QCOMPARE(g.final_logit_softcapping, s.final_logit_softcapping);
  QCOMPARE(g.attn_logit_softcapping, s.attn_logit_softcapping);
  QCOMPARE(g.bos_token_id, s.bos_token_id);
  QCOMPARE(g.pad_token_id, s.pad_token_id);
  QCOMPARE(g.eos_token_ids, s.eos_token_ids);
  QCOMPARE(g.layer_is_global, s.layer_is_global);
}

}  // namespace

class GgufReaderTest : public QObject {
  Q_OBJECT
 private slots:
  void headerKeysAndTensors() {
    auto f = GgufFile::open(gguf_path("a", "f16"));
    QCOMPARE(f->version(), 3u);
    QCOMPARE(f->alignment(), uint64_t(32));
    QCOMPARE(f->metadata().size(), size_t(26));
    QCOMPARE(f->tensors().size(), size_t(80));  // 6 layers x 13 + embedding + final norm
    QCOMPARE(f->data_offset() % 32, uint64_t(0));
    QCOMPARE(std::string(*f->get_string("general.architecture")), std::string("gemma3"));
    QCOMPARE(*f->get_uint("gemma3.block_count"), uint64_t(6));
    QCOMPARE(*f->get_uint("gemma3.attention.sliding_window"), uint64_t(8));
    QCOMPARE(*f->get_bool("tokenizer.ggml.add_space_prefix"), false);
    QCOMPARE(f->get_string_array("tokenizer.ggml.tokens")->size(), size_t(512));
    QCOMPARE(std::string(f->get_string_array("tokenizer.ggml.tokens")->at(4)), std::string("<start_of_turn>"));
    QVERIFY(!f->get_uint("gemma3.no_such_key"));
    QVERIFY_THROWS_EXCEPTION(Error, f->get_string("gemma3.block_count"));  // wrong type is an error

    const GgufTensorInfo* embed = f->find_tensor("token_embd.weight");
    QVERIFY(embed);
    QCOMPARE(embed->dims, (std::vector<uint64_t>{64, 512}));  // GGUF order: columns first
    QCOMPARE(embed->type, uint32_t(GgmlType::F16));
    QCOMPARE(embed->bytes, size_t(64 * 512 * 2));
    // The last tensor ends exactly at the end of the file.
    const GgufTensorInfo* last = f->find_tensor("output_norm.weight");
    QCOMPARE(f->data_offset() + last->offset + last->bytes, uint64_t(f->size()));

    auto q4 = GgufFile::open(gguf_path("b", "q4_0"));
    QCOMPARE(q4->find_tensor("blk.0.attn_q.weight")->type, uint32_t(GgmlType::Q4_0));
    QCOMPARE(q4->find_tensor("token_embd.weight")->type, uint32_t(GgmlType::Q8_0));  // llama-quantize keeps it 8-bit
  }

  void configOfAMatchesSafetensors() {
    Checkpoint ck = open_gguf_checkpoint(gguf_path("a", "f16"));
    QCOMPARE(ck.format, std::string("gguf"));
    compare_configs(ck.config, safetensors_config("a"), true);
    QCOMPARE(ck.config.eos_token_ids, (std::vector<int>{1, 5}));  // </s> and <end_of_turn>
  }

  void configOfBDerivesTheScaleLikeLlamaCpp() {
    Checkpoint ck = open_gguf_checkpoint(gguf_path("b", "q8_0"));
    const Gemma3Config s = safetensors_config("b");
    compare_configs(ck.config, s, false);
    QCOMPARE(ck.config.rope_scaling_factor, 8.0f);
    // GGUF has no query_pre_attn_scalar; llama.cpp uses head_dim for every model but the 62-layer one.
    QCOMPARE(s.query_pre_attn_scalar, 24.0f);
    QCOMPARE(ck.config.query_pre_attn_scalar, 32.0f);
    QCOMPARE(ck.config.layer_is_global, (std::vector<bool>{false, false, false, false, false, true, false}));
  }

  void headerOnlyHasNoTensors() {
    Checkpoint ck = open_gguf_checkpoint(gguf_path("a", "q4_0"), /*header_only=*/true);
    QVERIFY(!ck.tensors);
    QVERIFY(!ck.tokenizer_proto.empty());
    QCOMPARE(ck.config.num_layers, 6);
  }

  void weightsMatchTheSafetensorsCheckpoint_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<double>("bound");  // relative error a tensor may have after llama.cpp's conversion
    for (const char* name : {"a", "b"}) {
      QTest::newRow((std::string(name) + " f16").c_str()) << name << "f16" << 1e-3;
      QTest::newRow((std::string(name) + " q8_0").c_str()) << name << "q8_0" << 1e-2;
      QTest::newRow((std::string(name) + " q4_0").c_str()) << name << "q4_0" << 0.2;
    }
  }
  void weightsMatchTheSafetensorsCheckpoint() {
    QFETCH(QString, name);
    QFETCH(QString, kind);
    QFETCH(double, bound);
    Checkpoint gguf = open_gguf_checkpoint(gguf_path(name.toStdString(), kind.toStdString()));
    Checkpoint hf = open_checkpoint(folder_path(name.toStdString()));
    QVERIFY(gguf.tensors->norms_include_one());
    QVERIFY(!hf.tensors->norms_include_one());
    const std::vector<std::string> hf_names = hf.tensors->names();
    QCOMPARE(gguf.tensors->names().size(), hf_names.size());
    for (const std::string& n : hf_names) {
      const TensorView* g = gguf.tensors->find(n);
      const TensorView* h = hf.tensors->find(n);
      QVERIFY2(g, n.c_str());
      QVERIFY2(g->shape == h->shape, n.c_str());
      std::vector<float> gv = to_floats(*g), hv = to_floats(*h);
      if (n.find("norm") != std::string::npos) {
        // llama.cpp's converter stores Gemma's norms as 1 + w, in float32.
        QCOMPARE(g->dtype, DType::F32);
        for (size_t i = 0; i < hv.size(); ++i) QVERIFY2(std::abs(gv[i] - (hv[i] + 1.0f)) < 1e-6f, n.c_str());
      } else {
        const double err = relative_error(gv, hv);
        QVERIFY2(err < bound, (n + ": relative error " + std::to_string(err)).c_str());
      }
    }
  }
};

QTEST_APPLESS_MAIN(GgufReaderTest)
#include "test_gguf_reader.moc"
