// Gemma 3 seeing images, checked against transformers' logits on the tiny vision fixture
// (tests/data/vision: a SigLIP tower of 64x64 images, 16 image tokens, a text window of 8 that an
// image is longer than) through `kiln logits --image`, and the chat path's image handling through
// the engine API.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include "fixture_reference.h"
#include "kiln/engine.h"

using namespace kiln;
using namespace kiln::test;

namespace {

const QString kVision = QString(KILN_TEST_DATA) + "/vision";

struct Run {
  int code;
  QByteArray out, err;
};

Run kiln_cli(const QStringList& args) {
  QProcess p;
  p.start(QString(KILN_BINARY_DIR) + "/core/cli/kiln", args);
  if (!p.waitForFinished(120000)) qFatal("kiln did not finish");
  return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

struct VisionCase {
  QString image;  // "" for text only
  std::vector<int32_t> ids;
  std::vector<std::vector<float>> logits;
};

std::vector<VisionCase> vision_cases() {
  QFile f(kVision + "/reference.json");
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open the vision reference");
  std::vector<VisionCase> out;
  for (const QJsonValue& v : QJsonDocument::fromJson(f.readAll()).object()["cases"].toArray()) {
    const QJsonObject c = v.toObject();
    VisionCase vc;
    vc.image = c["image"].isString() ? c["image"].toString() : QString();
    for (const QJsonValue& id : c["input_ids"].toArray()) vc.ids.push_back(id.toInt());
    for (const QJsonValue& row : c["logits"].toArray()) {
      std::vector<float> r;
      for (const QJsonValue& x : row.toArray()) r.push_back(float(x.toDouble()));
      vc.logits.push_back(std::move(r));
    }
    out.push_back(std::move(vc));
  }
  return out;
}

QString ids_text(const std::vector<int32_t>& ids) {
  QStringList parts;
  for (int32_t id : ids) parts << QString::number(id);
  return parts.join(',');
}

std::vector<std::vector<float>> parse_logits(const QByteArray& json) {
  std::vector<std::vector<float>> rows;
  for (const QJsonValue& row : QJsonDocument::fromJson(json).object()["logits"].toArray()) {
    std::vector<float> r;
    for (const QJsonValue& x : row.toArray()) r.push_back(float(x.toDouble()));
    rows.push_back(std::move(r));
  }
  return rows;
}

// `kiln logits` on a case, with `extra` arguments (the model, --prefill ...).
Agreement run_case(const VisionCase& c, QStringList extra) {
  QStringList args{"logits", "--backend", "cpu", "--tokens", ids_text(c.ids)};
  if (!c.image.isEmpty()) args << "--image" << kVision + "/" + c.image;
  const Run r = kiln_cli(args + extra);
  if (r.code != 0) qWarning("kiln logits failed: %s", r.err.constData());
  const auto rows = parse_logits(r.out);
  if (rows.size() != c.logits.size()) return {1e9, 0, 1e9};
  return compare(rows, c.logits);
}

const VisionCase& case_with(const std::vector<VisionCase>& cases, const QString& image) {
  for (const VisionCase& c : cases)
    if (c.image == image) return c;
  qFatal("no case with image %s", qPrintable(image));
}

Image file_image(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(path));
  const QByteArray bytes = f.readAll();
  return {path.toStdString(), std::string(bytes.constData(), size_t(bytes.size()))};
}

}  // namespace

class VisionLogits : public QObject {
  Q_OBJECT
 private slots:
  void exact_image_matches_transformers() {
    const auto cases = vision_cases();
    const VisionCase& c = case_with(cases, "exact.png");
    for (const QString& prefill : {QString("0"), QString("3"), QString("10")}) {
      const Agreement a = run_case(c, {"--model", kVision, "--prefill", prefill});
      QVERIFY2(a.relative_error < 1e-3, qPrintable(QString("prefill %1: relative error %2").arg(prefill).arg(a.relative_error)));
    }
  }

  void resized_image_matches_within_resize_differences() {
    const auto cases = vision_cases();
    const Agreement a = run_case(case_with(cases, "wide.png"), {"--model", kVision});
    QVERIFY2(a.relative_error < 5e-2, qPrintable(QString("relative error %1").arg(a.relative_error)));
    QVERIFY2(a.top1 >= 0.95, qPrintable(QString("top-1 %1").arg(a.top1)));
  }

  void text_only_case_is_unchanged() {
    const auto cases = vision_cases();
    const Agreement a = run_case(case_with(cases, ""), {"--model", kVision});
    QVERIFY2(a.relative_error < 1e-4, qPrintable(QString("relative error %1").arg(a.relative_error)));
  }

  void gguf_with_mmproj_matches() {
    const auto cases = vision_cases();
    const VisionCase& c = case_with(cases, "exact.png");
    const QString gguf = kVision + "/tiny-gemma3-vision-f16.gguf";
    const Agreement named = run_case(c, {"--model", gguf, "--mmproj", kVision + "/mmproj-tiny-gemma3-vision-f16.gguf"});
    QVERIFY2(named.relative_error < 1e-2, qPrintable(QString("relative error %1").arg(named.relative_error)));
    // The one mmproj*.gguf beside the model is found without --mmproj.
    const Agreement found = run_case(c, {"--model", gguf});
    QCOMPARE(found.relative_error, named.relative_error);
  }

  void bad_images_are_clear_errors() {
    const auto cases = vision_cases();
    const VisionCase& c = case_with(cases, "exact.png");
    const QString ids = ids_text(c.ids);
    QTemporaryDir dir;
    const QString broken = dir.filePath("broken.png");
    {
      QFile in(kVision + "/exact.png"), out(broken);
      QVERIFY(in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly));
      out.write(in.readAll().left(300));  // truncated
    }
    struct Bad {
      QStringList args;
      QString mentions;
    };
    const std::vector<Bad> bad = {
        {{"--model", kVision, "--image", broken}, "broken.png"},
        {{"--model", kVision, "--image", dir.filePath("missing.png")}, "missing.png"},
        {{"--model", kVision, "--image", kVision + "/exact.png", "--image", kVision + "/wide.png"}, "room for 1 image"},
        {{"--model", QString(KILN_TEST_DATA) + "/fixtures/tiny-gemma3-b", "--image", kVision + "/exact.png"},
         "cannot see images"},
    };
    for (const Bad& b : bad) {
      const Run r = kiln_cli(QStringList{"logits", "--backend", "cpu", "--tokens", ids} + b.args);
      const QString err = QString::fromUtf8(r.err).trimmed();
      QVERIFY2(r.code != 0 && !err.contains('\n') && err.contains(b.mentions), qPrintable(b.args.join(' ') + ": " + err));
    }
  }

  // A chat's image is encoded once: the next turn reuses the cached prefix with it, and a different
  // image in its place is not mistaken for it.
  void chat_images_are_encoded_once_and_told_apart() {
    LoadOptions o;
    o.path = kVision.toStdString();
    o.backend = BackendKind::Cpu;
    auto engine = Engine::load(o);
    QVERIFY(engine->info().vision);
    QCOMPARE(engine->info().image_tokens, 16);
    GenerateOptions g;
    g.sampling.temperature = 0.0f;
    g.max_tokens = 4;
    std::vector<ChatMessage> chat{{Role::User, "What is this?", {file_image(kVision + "/exact.png")}}};
    const Prompt prompt = engine->chat_prompt(chat);
    QCOMPARE(std::count(prompt.tokens.begin(), prompt.tokens.end(), 640), 16);
    QCOMPARE(prompt.images.size(), size_t(1));
    std::string answer;
    const GenerationStats first = engine->chat(chat, g, [&](std::string_view t) { answer += t; return true; });
    QCOMPARE(first.images_encoded, 1);
    QVERIFY(first.generated_tokens > 0);
    chat.push_back({Role::Assistant, answer, {}});
    chat.push_back({Role::User, "And now?", {}});
    const GenerationStats second = engine->chat(chat, g, nullptr);
    QCOMPARE(second.images_encoded, 0);
    QVERIFY2(second.cached_prompt_tokens > int(prompt.tokens.size()) - 8,
             qPrintable(QString("reused %1 of %2").arg(second.cached_prompt_tokens).arg(prompt.tokens.size())));
    chat[0].images = {file_image(kVision + "/wide.png")};
    const GenerationStats third = engine->chat(chat, g, nullptr);
    QCOMPARE(third.images_encoded, 1);
    const int image_at = int(std::find(prompt.tokens.begin(), prompt.tokens.end(), 640) - prompt.tokens.begin());
    QVERIFY(third.cached_prompt_tokens <= image_at);
  }

  // Pan-and-scan: a 1200x400 picture goes in whole and as three 400x400 crops, in the processor's
  // wording; each view is encoded once.
  void pan_and_scan_adds_the_crops() {
    LoadOptions o;
    o.path = kVision.toStdString();
    o.backend = BackendKind::Cpu;
    o.images.pan_and_scan = true;
    auto engine = Engine::load(o);
    const Image image = file_image(kVision + "/banner.png");  // 1200x400
    const std::vector<ChatMessage> chat{{Role::User, "Read it.", {image}}};
    const Prompt prompt = engine->chat_prompt(chat);
    QCOMPARE(std::count(prompt.tokens.begin(), prompt.tokens.end(), 640), 4 * 16);
    std::vector<int32_t> words;  // the image token lies past the tokenizer's pieces
    std::copy_if(prompt.tokens.begin(), prompt.tokens.end(), std::back_inserter(words), [](int32_t id) { return id < 630; });
    const std::string text = engine->detokenize(words);
    QVERIFY2(text.find("Here is the original image") != std::string::npos &&
                 text.find("and here are some crops to help you see better") != std::string::npos,
             text.c_str());
    GenerateOptions g;
    g.sampling.temperature = 0.0f;
    g.max_tokens = 2;
    QCOMPARE(engine->chat(chat, g, nullptr).images_encoded, 4);
  }
};

QTEST_GUILESS_MAIN(VisionLogits)
#include "test_vision_logits.moc"
