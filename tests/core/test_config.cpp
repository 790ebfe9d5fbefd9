// config.json parsing: the fixtures' values as Qt's own JSON reader sees them, the library defaults
// the released multimodal configs depend on, layer patterns, and a clear error for each bad input.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "kiln/types.h"
#include "model/config.h"
#include "test_files.h"

using kiln::Gemma3Config;
using namespace kiln::test;

namespace {

QString fixture(const char* name) { return QStringLiteral(KILN_TEST_DATA "/fixtures/") + name; }

Gemma3Config parse(const QByteArray& text) {
  return kiln::parse_gemma3_config(text.toStdString(), "config.json");
}

std::vector<int> int_list(const QJsonValue& value) {
  if (value.isDouble()) return {value.toInt()};
  std::vector<int> ids;
  for (const QJsonValue& id : value.toArray()) ids.push_back(id.toInt());
  return ids;
}

std::vector<bool> pattern(int layers, int every) {
  std::vector<bool> is_global;
  for (int i = 0; i < layers; ++i) is_global.push_back((i + 1) % every == 0);
  return is_global;
}

// Every field of the struct against the text settings object of the file.
void compare_with_file(const Gemma3Config& config, const QJsonObject& text, const QJsonObject& top) {
  QCOMPARE(config.vocab_size, text["vocab_size"].toInt());
  QCOMPARE(config.hidden_size, text["hidden_size"].toInt());
  QCOMPARE(config.intermediate_size, text["intermediate_size"].toInt());
  QCOMPARE(config.num_layers, text["num_hidden_layers"].toInt());
  QCOMPARE(config.num_heads, text["num_attention_heads"].toInt());
  QCOMPARE(config.num_kv_heads, text["num_key_value_heads"].toInt());
  QCOMPARE(config.head_dim, text["head_dim"].toInt());
  QCOMPARE(config.sliding_window, text["sliding_window"].toInt());
  QCOMPARE(config.sliding_window_pattern, text["sliding_window_pattern"].toInt());
  QCOMPARE(config.max_position_embeddings, text["max_position_embeddings"].toInt());
  QCOMPARE(config.query_pre_attn_scalar, float(text["query_pre_attn_scalar"].toDouble()));
  QCOMPARE(config.rms_norm_eps, float(text["rms_norm_eps"].toDouble()));
  QCOMPARE(config.rope_theta, float(text["rope_theta"].toDouble()));
  QCOMPARE(config.rope_local_base_freq, float(text["rope_local_base_freq"].toDouble()));
  const QJsonValue scaling = text["rope_scaling"];
  QCOMPARE(config.rope_scaling_factor, scaling.isNull() ? 1.0f : float(scaling["factor"].toDouble()));
  QVERIFY(text["final_logit_softcapping"].isNull() && text["attn_logit_softcapping"].isNull());
  QCOMPARE(config.final_logit_softcapping, 0.0f);
  QCOMPARE(config.attn_logit_softcapping, 0.0f);
  QCOMPARE(config.bos_token_id, text["bos_token_id"].toInt());
  QCOMPARE(config.pad_token_id, text["pad_token_id"].toInt());
  QCOMPARE(config.eos_token_ids, int_list(top.contains("eos_token_id") ? top["eos_token_id"] : text["eos_token_id"]));
  QCOMPARE(config.layer_is_global, pattern(config.num_layers, config.sliding_window_pattern));
}

}  // namespace

class ConfigTest : public QObject {
  Q_OBJECT

 private slots:
  void flatFixtureA() {
    const QByteArray text = read_file(fixture("tiny-gemma3-a/config.json"));
    const Gemma3Config config = parse(text);
    const QJsonObject root = QJsonDocument::fromJson(text).object();
    compare_with_file(config, root, root);
    QVERIFY(!config.nested_layout);
    // The fixture's README: five sliding layers, then one global.
    QCOMPARE(config.layer_is_global, (std::vector<bool>{false, false, false, false, false, true}));
    QCOMPARE(config.kv_positions(0, 100), 8);   // local: the window
    QCOMPARE(config.kv_positions(5, 100), 100);  // global: the whole context
    QCOMPARE(config.kv_positions(0, 5), 5);
  }

  void nestedFixtureB() {
    const QByteArray text = read_file(fixture("tiny-gemma3-b/config.json"));
    const Gemma3Config config = parse(text);
    const QJsonObject root = QJsonDocument::fromJson(text).object();
    compare_with_file(config, root["text_config"].toObject(), root);
    QVERIFY(config.nested_layout);
    QCOMPARE(config.rope_scaling_factor, 8.0f);
    // README: layer 6 (1-based) global, layer 7 sliding.
    QCOMPARE(config.layer_is_global, (std::vector<bool>{false, false, false, false, false, true, false}));
  }

  // The released gemma-3-4b-it config.json states only a few text settings; the rest are defaults.
  void released4bDefaults() {
    const Gemma3Config config = parse(R"({
      "architectures": ["Gemma3ForConditionalGeneration"],
      "boi_token_index": 255999, "eoi_token_index": 256000, "eos_token_id": [1, 106],
      "image_token_index": 262144, "initializer_range": 0.02, "mm_tokens_per_image": 256,
      "model_type": "gemma3",
      "text_config": {
        "hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
        "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024
      },
      "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
      "vision_config": {"hidden_size": 1152, "image_size": 896, "model_type": "siglip_vision_model"}
    })");
    QVERIFY(config.nested_layout);
    // Values of the 4B column in docs/gemma3.md and the library defaults listed there.
    QCOMPARE(config.num_layers, 34);
    QCOMPARE(config.hidden_size, 2560);
    QCOMPARE(config.intermediate_size, 10240);
    QCOMPARE(config.num_heads, 8);
    QCOMPARE(config.num_kv_heads, 4);
    QCOMPARE(config.head_dim, 256);
    QCOMPARE(config.sliding_window, 1024);
    QCOMPARE(config.query_pre_attn_scalar, 256.0f);
    QCOMPARE(config.rope_scaling_factor, 8.0f);
    QCOMPARE(config.vocab_size, 262208);
    QCOMPARE(config.rms_norm_eps, 1e-6f);
    QCOMPARE(config.rope_theta, 1000000.0f);
    QCOMPARE(config.rope_local_base_freq, 10000.0f);
    QCOMPARE(config.sliding_window_pattern, 6);
    QCOMPARE(config.max_position_embeddings, 131072);
    QCOMPARE(config.final_logit_softcapping, 0.0f);
    QCOMPARE(config.attn_logit_softcapping, 0.0f);
    QCOMPARE(config.eos_token_ids, (std::vector<int>{1, 106}));  // top level, not text_config's default
    QCOMPARE(config.bos_token_id, 2);
    QCOMPARE(config.pad_token_id, 0);
    QCOMPARE(config.layer_is_global, pattern(34, 6));
    QCOMPARE(std::count(config.layer_is_global.begin(), config.layer_is_global.end(), true), 5);
  }

  // gemma-3-1b-it: flat, eos as a list; an int eos must work as well.
  void flat1bAndIntEos() {
    const QByteArray text = R"({
      "architectures": ["Gemma3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
      "attn_logit_softcapping": null, "bos_token_id": 2, "cache_implementation": "hybrid",
      "eos_token_id": EOS, "final_logit_softcapping": null, "head_dim": 256,
      "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "initializer_range": 0.02,
      "intermediate_size": 6912, "max_position_embeddings": 32768, "model_type": "gemma3_text",
      "num_attention_heads": 4, "num_hidden_layers": 26, "num_key_value_heads": 1, "pad_token_id": 0,
      "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000,
      "rope_scaling": null, "rope_theta": 1000000, "sliding_window": 512,
      "sliding_window_pattern": 6, "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 262144
    })";
    Gemma3Config config = parse(QByteArray(text).replace("EOS", "[1, 106]"));
    QVERIFY(!config.nested_layout);
    QCOMPARE(config.eos_token_ids, (std::vector<int>{1, 106}));
    QCOMPARE(config.num_kv_heads, 1);
    QCOMPARE(config.rope_scaling_factor, 1.0f);
    QCOMPARE(config.max_position_embeddings, 32768);
    // docs/gemma3.md calls it the 1B model.
    QVERIFY(std::abs(double(config.parameter_count()) - 1.0e9) < 0.01e9);
    config = parse(QByteArray(text).replace("EOS", "1"));
    QCOMPARE(config.eos_token_ids, (std::vector<int>{1}));
  }

  void parameterCount27b() {
    const Gemma3Config config = parse(R"({"model_type": "gemma3", "text_config": {
      "head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504, "num_attention_heads": 32,
      "num_hidden_layers": 62, "num_key_value_heads": 16, "query_pre_attn_scalar": 168,
      "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024}})");
    // docs/gemma3.md: about 27.0 B parameters, 1.41 B of them the tied embedding.
    QVERIFY(std::abs(double(config.parameter_count()) - 27.0e9) < 0.05e9);
    QVERIFY(std::abs(double(config.vocab_size) * config.hidden_size - 1.41e9) < 0.01e9);
  }

  void layerTypesOverridePattern() {
    const Gemma3Config config = parse(R"({"model_type": "gemma3_text", "num_hidden_layers": 4,
      "sliding_window_pattern": 6, "layer_types": ["full_attention", "sliding_attention",
      "sliding_attention", "full_attention"]})");
    QCOMPARE(config.layer_is_global, (std::vector<bool>{true, false, false, true}));
    QVERIFY(config.is_global(0) && !config.is_global(1));
  }

  void newerTransformersForms() {
    // Old-style "type" key in rope_scaling, and "_sliding_window_pattern" (transformers >= 4.53).
    const Gemma3Config config = parse(R"({"model_type": "gemma3_text", "num_hidden_layers": 8,
      "_sliding_window_pattern": 4, "rope_scaling": {"type": "linear", "factor": 2}})");
    QCOMPARE(config.rope_scaling_factor, 2.0f);
    QCOMPARE(config.layer_is_global, pattern(8, 4));
  }

  // transformers 5 writes rope_parameters per layer type and dtype; the same model as the 4.x file.
  void transformers5Layout_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("a (text-only)") << "tiny-gemma3-a";
    QTest::newRow("b (multimodal, linear x8)") << "tiny-gemma3-b";
  }
  void transformers5Layout() {
    QFETCH(QString, name);
    const Gemma3Config v4 = parse(read_file(fixture(qPrintable(name + "/config.json"))));
    const Gemma3Config v5 = parse(read_file(fixture(qPrintable("hf5/" + name + "-config-v5.json"))));
    QCOMPARE(v5.rope_theta, v4.rope_theta);
    QCOMPARE(v5.rope_local_base_freq, v4.rope_local_base_freq);
    QCOMPARE(v5.rope_scaling_factor, v4.rope_scaling_factor);
    QCOMPARE(v5.layer_is_global, v4.layer_is_global);
    QCOMPARE(v5.query_pre_attn_scalar, v4.query_pre_attn_scalar);
    QCOMPARE(v5.eos_token_ids, v4.eos_token_ids);
    QCOMPARE(v5.nested_layout, v4.nested_layout);
    QCOMPARE(v5.dtype, std::string("bfloat16"));
    const std::string prefix = v5.nested_layout ? "config.json: text_config." : "config.json: ";
    QCOMPARE(v5.origins.at("rope_theta"), prefix + "rope_parameters.full_attention.rope_theta");
    QCOMPARE(v5.origins.at("rope_local_base_freq"), prefix + "rope_parameters.sliding_attention.rope_theta");
    QCOMPARE(v4.origins.at("rope_theta"), prefix + "rope_theta");
    // Every key transformers writes is known: nothing to note.
    QVERIFY2(v5.notes.empty(), v5.notes.empty() ? "" : v5.notes.front().c_str());
    QVERIFY(v4.notes.empty());
  }

  // Both layouts in one file: allowed when they say the same.
  void bothLayoutsAgreeing() {
    const Gemma3Config config = parse(R"({"model_type": "gemma3_text", "rope_theta": 1000000.0,
      "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "rope_local_base_freq": 10000.0,
      "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                          "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}})");
    QCOMPARE(config.rope_scaling_factor, 8.0f);
    QCOMPARE(config.rope_theta, 1e6f);
    // rope_parameters without rope_theta keeps the default, as transformers does.
    const Gemma3Config bare = parse(R"({"model_type": "gemma3_text", "rope_parameters": {
      "full_attention": {"rope_type": "default"}, "sliding_attention": {"rope_type": "default"}}})");
    QCOMPARE(bare.rope_theta, 1e6f);
    QCOMPARE(bare.rope_local_base_freq, 1e4f);
  }

  // A key Kiln does not know is a note, not an error; a known harmless one is neither.
  void unknownKeysAreNotes() {
    const Gemma3Config config = parse(R"({"model_type": "gemma3", "some_new_setting": 3, "initializer_range": 0.02,
      "text_config": {"another_new_one": true, "attention_dropout": 0.0, "use_bidirectional_attention": false,
                      "attn_logit_softcapping": null}})");
    QCOMPARE(config.notes.size(), size_t(2));
    QCOMPARE(config.notes[0], std::string("config.json: text_config.another_new_one is not a setting Kiln knows; it was ignored"));
    QCOMPARE(config.notes[1], std::string("config.json: some_new_setting is not a setting Kiln knows; it was ignored"));
  }

  void architectureWithoutModelType() {
    const Gemma3Config config = parse(R"({"architectures": ["Gemma3ForCausalLM"], "num_hidden_layers": 2})");
    QVERIFY(!config.nested_layout);
    QCOMPARE(config.num_layers, 2);
  }

  void unsupportedArchitecture() {
    QCOMPARE(error_of([] { parse(R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"]})"); }),
             QStringLiteral("config.json: unsupported architecture 'llama' (Kiln runs Gemma 3)"));
    QCOMPARE(error_of([] { parse(R"({"architectures": ["MistralForCausalLM"]})"); }),
             QStringLiteral("config.json: unsupported architecture 'MistralForCausalLM' (Kiln runs Gemma 3)"));
  }

  void badInput_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("mentions");
    auto flat = [](const char* settings) {
      return QByteArray(R"({"model_type": "gemma3_text", )") + settings + "}";
    };
    QTest::newRow("string size") << flat(R"("hidden_size": "64")") << "hidden_size must be an integer, got string";
    QTest::newRow("fractional size") << QByteArray(R"({"model_type": "gemma3", "text_config": {"num_hidden_layers": 2.5}})")
                                     << "text_config.num_hidden_layers must be an integer";
    QTest::newRow("bool size") << flat(R"("head_dim": true)") << "head_dim must be an integer, got boolean";
    QTest::newRow("zero layers") << flat(R"("num_hidden_layers": 0)") << "num_hidden_layers must be at least 1";
    QTest::newRow("negative head_dim") << flat(R"("head_dim": -16)") << "head_dim must be at least 1";
    QTest::newRow("huge hidden") << flat(R"("hidden_size": 10000000)") << "hidden_size is 10000000, beyond";
    QTest::newRow("beyond int") << flat(R"("vocab_size": 10000000000)") << "vocab_size is out of range";
    QTest::newRow("heads vs kv heads") << flat(R"("num_attention_heads": 6, "num_key_value_heads": 4)")
                                       << "num_attention_heads (6) is not a multiple of num_key_value_heads (4)";
    QTest::newRow("string float") << flat(R"("rope_theta": "1e6")") << "rope_theta must be a number";
    QTest::newRow("zero eps") << flat(R"("rms_norm_eps": 0)") << "rms_norm_eps must be a positive number";
    QTest::newRow("yarn") << flat(R"("rope_scaling": {"rope_type": "yarn", "factor": 4})") << "type 'yarn' is not supported";
    QTest::newRow("linear no factor") << flat(R"("rope_scaling": {"rope_type": "linear"})") << "numeric factor";
    QTest::newRow("scaling string") << flat(R"("rope_scaling": "linear")") << "rope_scaling must be an object or null";
    QTest::newRow("eos string") << flat(R"("eos_token_id": "</s>")") << "eos_token_id must be an integer";
    QTest::newRow("eos outside vocab") << flat(R"("vocab_size": 512, "eos_token_id": [1, 600])")
                                       << "eos_token_id 600 is outside the vocabulary of 512";
    QTest::newRow("eos empty") << flat(R"("eos_token_id": [])") << "eos_token_id is an empty list";
    QTest::newRow("layer_types length") << flat(R"("num_hidden_layers": 3, "layer_types": ["full_attention"])")
                                        << "layer_types has 1 entries for 3 layers";
    QTest::newRow("layer_types value") << flat(R"("num_hidden_layers": 1, "layer_types": ["chunked_attention"])")
                                       << "unknown layer type 'chunked_attention'";
    QTest::newRow("activation") << flat(R"("hidden_activation": "silu")") << "hidden_activation 'silu' is not supported";
    QTest::newRow("text_config list") << QByteArray(R"({"model_type": "gemma3", "text_config": []})")
                                      << "text_config must be an object";
    // transformers 5: rope_parameters per layer type; every RoPE but default and linear is refused.
    auto rope5 = [&flat](const std::string& full, const std::string& sliding = "{\"rope_type\": \"default\"}") {
      const std::string settings = "\"rope_parameters\": {\"full_attention\": " + full + ", \"sliding_attention\": " + sliding + "}";
      return flat(settings.c_str());
    };
    for (const std::string type : {"yarn", "dynamic", "llama3", "longrope"})
      QTest::newRow(("rope_parameters " + type).c_str())
          << rope5("{\"rope_type\": \"" + type + "\", \"factor\": 8.0, \"rope_theta\": 1e6}")
          << QString("rope_parameters.full_attention type '%1' is not supported").arg(QString::fromStdString(type));
    QTest::newRow("rope_parameters flat") << flat(R"("rope_parameters": {"rope_type": "default", "rope_theta": 1e6})")
                                          << "Gemma 3 has one entry per layer type";
    QTest::newRow("rope_parameters one type") << flat(R"("rope_parameters": {"full_attention": {"rope_type": "default"}})")
                                              << "rope_parameters has no sliding_attention entry";
    QTest::newRow("local layers scaled") << rope5("{\"rope_type\": \"default\"}", "{\"rope_type\": \"linear\", \"factor\": 2}")
                                         << "sliding_attention scales local layers' positions";
    QTest::newRow("rope extra key") << rope5("{\"rope_type\": \"linear\", \"factor\": 8, \"original_max_position_embeddings\": 8192}")
                                    << "has 'original_max_position_embeddings', which linear RoPE does not take";
    QTest::newRow("rope_theta disagrees") << QByteArray(R"({"model_type": "gemma3_text", "rope_theta": 10000.0,
        "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
                            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})")
                                          << "rope_theta is 10000.000000 but rope_parameters says 1000000.000000";
    QTest::newRow("rope_scaling disagrees") << QByteArray(R"({"model_type": "gemma3_text",
        "rope_scaling": {"rope_type": "linear", "factor": 4},
        "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0},
                            "sliding_attention": {"rope_type": "default"}}})")
                                            << "rope_scaling is 4.000000 but rope_parameters says 8.000000";
    // Settings that change the math and that Kiln does not compute.
    QTest::newRow("attention softcap") << flat(R"("attn_logit_softcapping": 50.0)") << "attn_logit_softcapping is 50.0: it soft-caps";
    QTest::newRow("final softcap") << flat(R"("final_logit_softcapping": 30.0)") << "final_logit_softcapping is 30.0";
    QTest::newRow("bidirectional") << flat(R"("use_bidirectional_attention": true)") << "use_bidirectional_attention is true";
    QTest::newRow("biases") << flat(R"("attention_bias": true)") << "attention_bias is true";
    QTest::newRow("untied") << flat(R"("tie_word_embeddings": false)") << "tie_word_embeddings is false";
    QTest::newRow("partial rotary") << flat(R"("partial_rotary_factor": 0.5)") << "partial_rotary_factor is 0.5";
    QTest::newRow("quantized storage") << flat(R"("quantization_config": {"quant_method": "bitsandbytes"})")
                                       << "quantization_config is {";
    QTest::newRow("top-level softcap") << QByteArray(R"({"model_type": "gemma3", "final_logit_softcapping": 30.0, "text_config": {}})")
                                       << "config.json: final_logit_softcapping is 30.0";
    QTest::newRow("number past double") << QByteArray(R"({"model_type": "gemma3_text", "rope_theta": 1e999})")
                                        << "not valid JSON";
    QTest::newRow("bad json") << QByteArray(R"({"model_type": "gemma3_text",)") << "not valid JSON";
    QTest::newRow("empty") << QByteArray() << "not valid JSON";
    QTest::newRow("not an object") << QByteArray("[1, 2]") << "not a JSON object";
  }

  void badInput() {
    QFETCH(QByteArray, json);
    QFETCH(QString, mentions);
    const QString message = error_of([&] { parse(json); });
    QVERIFY2(message.startsWith("config.json: "), qPrintable(message));
    QVERIFY2(message.contains(mentions), qPrintable(message));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
  }

  // GGUF configs are built field by field and go through finalize_config alone.
  void finalizeFillsPatternAndChecks() {
    Gemma3Config config;
    config.num_layers = 12;
    kiln::finalize_config(config, "model.gguf");
    QCOMPARE(config.layer_is_global, pattern(12, 6));

    Gemma3Config odd_heads;
    odd_heads.num_kv_heads = 3;
    QVERIFY(error_of([&] { kiln::finalize_config(odd_heads, "model.gguf"); }).startsWith("model.gguf: "));

    Gemma3Config short_types;
    short_types.layer_is_global = {true, false};
    QVERIFY(error_of([&] { kiln::finalize_config(short_types, "model.gguf"); }).contains("2 entries for 26 layers"));
  }
};

QTEST_APPLESS_MAIN(ConfigTest)
#include "test_config.moc"
