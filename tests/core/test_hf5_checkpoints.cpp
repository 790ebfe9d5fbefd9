// Hugging Face folders as current tools write them: a transformers 5 config.json (rope_parameters
// per layer type), a tokenizer.json with no tokenizer.model, and a generation_config.json whose
// defaults and end ids must reach generation. The folders are assembled from the fixtures and
// tests/data/fixtures/hf5/, which transformers 5.17 wrote from them (tests/tools/hf_reference.py).
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "fixture_reference.h"
#include "kiln/engine.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::string hf5(const std::string& file) { return fixture_dir("hf5") + "/" + file; }

// A model folder in `dir`: the fixture's weights, the given config and tokenizer files, and any
// extra files (name -> contents).
void assemble(const QTemporaryDir& dir, const std::string& fixture, const std::string& config,
              const std::string& tokenizer, const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  auto copy = [&](const std::string& from, const char* to) {
    QVERIFY2(QFile::copy(QString::fromStdString(from), dir.filePath(to)), (from + " -> " + to).c_str());
  };
  copy(fixture_dir(fixture.c_str()) + "/model.safetensors", "model.safetensors");
  copy(config, "config.json");
  copy(tokenizer, tokenizer.ends_with(".json") ? "tokenizer.json" : "tokenizer.model");
  for (const auto& [name, text] : extra) {
    QFile f(dir.filePath(QString::fromStdString(name)));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text.data(), qint64(text.size()));
  }
}

std::unique_ptr<Engine> load(const QString& path) {
  LoadOptions o;
  o.path = path.toStdString();
  o.precision = Precision::F32;
  o.backend = BackendKind::Cpu;
  o.context_length = 128;
  o.threads = 2;
  return Engine::load(o);
}

std::string generate(Engine& engine, const std::string& prompt, const GenerateOptions& options, GenerationStats* stats = nullptr) {
  std::string text;
  const GenerationStats s = engine.generate(prompt, options, [&](std::string_view t) { text += t; return true; });
  if (stats) *stats = s;
  return text;
}

}  // namespace

class Hf5Checkpoints : public QObject {
  Q_OBJECT
 private slots:
  // transformers 5's config.json computes transformers' logits (1e-4 is the F32 bound of the
  // 4.x configs too); fixture b carries the x8 linear scaling that a lost rope_parameters would drop.
  void transformers5ConfigMatchesReference_data() {
    QTest::addColumn<QString>("fixture");
    QTest::newRow("a") << "tiny-gemma3-a";
    QTest::newRow("b") << "tiny-gemma3-b";
  }
  void transformers5ConfigMatchesReference() {
    QFETCH(QString, fixture);
    const std::string name = fixture.toStdString();
    QTemporaryDir dir;
    assemble(dir, name, hf5(name + "-config-v5.json"), fixture_dir(name.c_str()) + "/tokenizer.model");
    auto engine = load(dir.path());
    const Reference ref = read_reference(fixture_dir(name.c_str()) + "/reference.json");
    for (const ReferenceCase& c : ref.cases)
      for (int prefill : {0, 5}) {
        const Agreement a = compare(engine->logits(c.ids, prefill), c.logits);
        QVERIFY2(a.relative_error < 1e-4, qPrintable(QString("relative error %1").arg(a.relative_error)));
        QCOMPARE(a.top1, 1.0);
      }
  }

  // The same file with a RoPE type Kiln does not compute is refused at load, naming file and key.
  void yarnIsAClearError() {
    QFile in(QString::fromStdString(hf5("tiny-gemma3-b-config-v5.json")));
    QVERIFY(in.open(QIODevice::ReadOnly));
    QByteArray config = in.readAll();
    QVERIFY(config.contains("\"rope_type\": \"linear\""));
    config.replace("\"rope_type\": \"linear\"", "\"rope_type\": \"yarn\"");
    QTemporaryDir dir;
    assemble(dir, "tiny-gemma3-b", fixture_dir("tiny-gemma3-b") + "/tokenizer.model", fixture_dir("tiny-gemma3-b") + "/tokenizer.model");
    QFile out(dir.filePath("config.json"));
    QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
    out.write(config);
    out.close();
    try {
      load(dir.path());
      QFAIL("a yarn config loaded");
    } catch (const Error& e) {
      QCOMPARE(QString(e.what()), dir.filePath("config.json") +
                                      ": text_config.rope_parameters.full_attention type 'yarn' is not supported "
                                      "(Kiln runs default and linear RoPE only)");
    }
  }

  // A folder with tokenizer.json and no tokenizer.model runs like the same folder with the model.
  void tokenizerJsonOnlyFolder() {
    QTemporaryDir with_json, with_model;
    assemble(with_json, "tiny-gemma3-a", fixture_dir("tiny-gemma3-a") + "/config.json", hf5("tiny-gemma3-a-tokenizer.json"));
    assemble(with_model, "tiny-gemma3-a", fixture_dir("tiny-gemma3-a") + "/config.json",
             fixture_dir("tiny-gemma3-a") + "/tokenizer.model");
    auto json_engine = load(with_json.path());
    auto model_engine = load(with_model.path());
    for (const std::string text : {"Permission is hereby granted, free of charge,", "  two  spaces\n\n\tand a tab",
                                   "<start_of_turn>user\nHi<end_of_turn>", "Grüße 🙂 12345"}) {
      QCOMPARE(json_engine->tokenize(text, true), model_engine->tokenize(text, true));
      QCOMPARE(json_engine->tokenize(text, false, false), model_engine->tokenize(text, false, false));
    }
    const std::vector<ChatMessage> chat = {{Role::System, "Be brief."}, {Role::User, "Name a license. "}};
    QCOMPARE(json_engine->chat_tokens(chat), model_engine->chat_tokens(chat));
    GenerateOptions greedy;
    greedy.sampling.temperature = 0.0f;
    greedy.max_tokens = 12;
    QCOMPARE(generate(*json_engine, "The licensor", greedy), generate(*model_engine, "The licensor", greedy));
  }

  // generation_config.json's sampling settings are the defaults a generation uses when its caller
  // sets none: do_sample false means greedy, so two default generations agree with an explicit one.
  void generationConfigDefaultsReachGeneration() {
    QTemporaryDir dir;
    assemble(dir, "tiny-gemma3-a", fixture_dir("tiny-gemma3-a") + "/config.json",
             fixture_dir("tiny-gemma3-a") + "/tokenizer.model", {{"generation_config.json", R"({"do_sample": false})"}});
    auto engine = load(dir.path());
    QCOMPARE(engine->info().sampling_defaults.temperature, 0.0f);
    GenerateOptions defaults;
    defaults.max_tokens = 16;
    const std::string first = generate(*engine, "The licensor", defaults);
    QCOMPARE(generate(*engine, "The licensor", defaults), first);
    GenerateOptions greedy = defaults;
    greedy.sampling.temperature = 0.0f;
    QCOMPARE(generate(*engine, "The licensor", greedy), first);
    // A caller's own setting still wins over the model's default.
    GenerateOptions hot = defaults;
    hot.sampling.temperature = 1.5f;
    hot.sampling.top_k = 0;
    hot.sampling.top_p = 1.0f;
    hot.sampling.min_p = 0.0f;
    int differ = 0;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      hot.sampling.seed = seed;
      differ += generate(*engine, "The licensor", hot) != first;
    }
    QVERIFY(differ > 0);
  }

  // Its eos_token_id list ends generation too, beside config.json's.
  void generationConfigEosEndsGeneration() {
    QTemporaryDir plain;
    assemble(plain, "tiny-gemma3-a", fixture_dir("tiny-gemma3-a") + "/config.json", fixture_dir("tiny-gemma3-a") + "/tokenizer.model");
    auto engine = load(plain.path());
    const std::vector<int32_t> prompt = engine->tokenize("The licensor", true);
    const auto rows = engine->logits(prompt);
    const int32_t next = int32_t(std::max_element(rows.back().begin(), rows.back().end()) - rows.back().begin());
    QVERIFY(next != 1 && next != 5);  // not already an end id of config.json

    QTemporaryDir dir;
    assemble(dir, "tiny-gemma3-a", fixture_dir("tiny-gemma3-a") + "/config.json", fixture_dir("tiny-gemma3-a") + "/tokenizer.model",
             {{"generation_config.json", "{\"eos_token_id\": [1, " + std::to_string(next) + "], \"do_sample\": false}"}});
    auto stopping = load(dir.path());
    GenerateOptions options;
    options.max_tokens = 8;
    GenerationStats stats;
    QCOMPARE(generate(*stopping, "The licensor", options, &stats), std::string());
    QCOMPARE(stats.stop_reason, StopReason::EndOfSequence);
    const auto& settings = stopping->info().settings;
    const auto eos = std::find_if(settings.begin(), settings.end(), [](const SettingOrigin& s) { return s.name == "eos_token_ids"; });
    QVERIFY(eos != settings.end());
    QCOMPARE(eos->value, "[1, 5, " + std::to_string(next) + "]");
    QCOMPARE(eos->origin, std::string("config.json: eos_token_id and generation_config.json: eos_token_id"));
  }
};

QTEST_APPLESS_MAIN(Hf5Checkpoints)
#include "test_hf5_checkpoints.moc"
