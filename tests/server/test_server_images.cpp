// Images in /v1/chat/completions (OpenAI's image_url content parts) over loopback: a data URL through
// the real server on the tiny vision model answers as the engine does with the same image, and every
// refusal a client can meet (text-only model, remote URL, bad base64, corrupt file, over the limit)
// comes back as an OpenAI error naming the image.
#include <QFile>
#include <QJsonDocument>
#include <QtTest>
#include <thread>

#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::string vision_dir() { return std::string(KILN_TEST_DATA) + "/vision"; }

std::string read_file(const std::string& path) {
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll().toStdString();
}

// The data URL encoded with Qt, independent of the server's own base64 code.
QString data_url(const std::string& bytes, const QString& mime = "image/png") {
  return "data:" + mime + ";base64," + QString::fromLatin1(QByteArray::fromStdString(bytes).toBase64());
}

QJsonObject image_part(const QString& url) {
  return {{"type", "image_url"}, {"image_url", QJsonObject{{"url", url}}}};
}
QJsonObject text_part(const QString& text) { return {{"type", "text"}, {"text", text}}; }

// One user message with these content parts; seeded sampling that makes the tiny model's text
// varied (greedy, it writes newlines), short.
std::string parts_body(const QJsonArray& parts, const QJsonObject& extra = {}, const QString& role = "user") {
  QJsonObject body = varied_sampling(5);
  body["model"] = "tiny";
  body["messages"] = QJsonArray{QJsonObject{{"role", role}, {"content", parts}}};
  body["max_tokens"] = 12;
  for (auto it = extra.begin(); it != extra.end(); ++it) body.insert(it.key(), it.value());
  return QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString();
}

QJsonObject error_of(const HttpResponse& r) { return json_object(r.body)["error"].toObject(); }

uint32_t crc32(const std::string& bytes) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// A PNG whose header claims width x height (with a valid CRC) and no pixel data after it.
std::string png_header_only(uint32_t width, uint32_t height) {
  auto be32 = [](uint32_t v) {
    return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  };
  const std::string ihdr = "IHDR" + be32(width) + be32(height) + std::string("\x08\x02\x00\x00\x00", 5);
  return std::string("\x89PNG\r\n\x1a\n", 8) + be32(13) + ihdr + be32(crc32(ihdr));
}

LoadOptions vision_load() {
  LoadOptions o;
  o.path = vision_dir();
  o.precision = Precision::F32;
  o.backend = BackendKind::Cpu;
  o.context_length = 256;
  o.threads = 1;
  return o;
}

}  // namespace

class ServerImagesTest : public QObject {
  Q_OBJECT

  std::unique_ptr<RunningServer> text_;    // tiny-gemma3-a: no vision tower
  std::unique_ptr<RunningServer> vision_;  // tests/data/vision (the tiny vision model), started by the tests that need it
  std::string exact_;

  RunningServer& vision() {
    if (!vision_) vision_ = start_server(vision_load(), {});
    return *vision_;
  }

 private slots:
  void initTestCase() {
    exact_ = read_file(vision_dir() + "/exact.png");
    QVERIFY2(exact_.size() > 1000, "tests/data/vision/exact.png is missing");
    text_ = start_tiny_server({});
  }

  void text_parts_alone_still_work() {
    const HttpResponse r = text_->client->post("/v1/chat/completions",
                                               parts_body({text_part("Tell me "), text_part("about licenses.")}));
    QCOMPARE(r.status, 200L);
    QCOMPARE(json_object(r.body)["object"].toString(), QString("chat.completion"));
  }

  void a_text_only_model_refuses_an_image() {
    const HttpResponse r = text_->client->post("/v1/chat/completions",
                                               parts_body({image_part(data_url(exact_)), text_part("What is this?")}));
    QCOMPARE(r.status, 400L);
    const QJsonObject error = error_of(r);
    QVERIFY2(error["message"].toString().contains("cannot see images"), r.body.c_str());
    QVERIFY2(error["message"].toString().contains("--mmproj"), r.body.c_str());  // how to give a GGUF its tower
    QCOMPARE(error["param"].toString(), QString("messages[0].content[0]"));
    // /v1/models does not claim vision for it.
    const QJsonObject model = json_object(text_->client->get("/v1/models").body)["data"].toArray()[0].toObject();
    QVERIFY(model["capabilities"].toArray().contains("chat"));
    QVERIFY(!model["capabilities"].toArray().contains("vision"));
  }

  void remote_urls_are_refused_unless_allowed() {
    const HttpResponse r = text_->client->post(
        "/v1/chat/completions", parts_body({image_part("https://example.com/cat.png"), text_part("What is this?")}));
    QCOMPARE(r.status, 400L);
    QVERIFY2(error_of(r)["message"].toString().contains("--allow-remote-images"), r.body.c_str());
    QCOMPARE(error_of(r)["param"].toString(), QString("messages[0].content[0]"));
  }

  void malformed_image_parts_get_400_naming_them() {
    struct Case {
      QJsonObject part;
      QString says;
    };
    const Case cases[] = {
        {image_part("data:image/png;base64,iVBORw0K!!!not-base64"), "not valid base64"},
        {image_part("data:text/plain;base64,aGVsbG8="), "image/png, image/jpeg or image/webp"},
        {image_part("data:image/png,rawbytes"), "base64"},
        {image_part("ftp://example.com/cat.png"), "data: URL"},
        {QJsonObject{{"type", "image_url"}}, "needs"},
        {QJsonObject{{"type", "audio"}}, "'text' or 'image_url'"},
    };
    for (const Case& c : cases) {
      const HttpResponse r = text_->client->post("/v1/chat/completions", parts_body({text_part("Look: "), c.part}));
      QCOMPARE(r.status, 400L);
      QVERIFY2(error_of(r)["message"].toString().contains(c.says), r.body.c_str());
      QVERIFY2(error_of(r)["param"].toString().startsWith("messages[0].content[1]"), r.body.c_str());
    }
  }

  void images_only_in_user_turns() {
    const HttpResponse r =
        text_->client->post("/v1/chat/completions", parts_body({image_part(data_url(exact_))}, {}, "system"));
    QCOMPARE(r.status, 400L);
    QVERIFY2(error_of(r)["message"].toString().contains("user messages only"), r.body.c_str());
  }

  void an_image_over_the_limit_gets_413() {
    server::ServerOptions options;
    options.images.max_bytes = 4096;  // exact.png is 9491 bytes
    auto small = start_tiny_server(options);
    const HttpResponse r =
        small->client->post("/v1/chat/completions", parts_body({image_part(data_url(exact_)), text_part("Hi")}));
    QCOMPARE(r.status, 413L);
    QCOMPARE(error_of(r)["code"].toString(), QString("image_too_large"));
    QVERIFY2(error_of(r)["message"].toString().contains("4096"), r.body.c_str());
  }

  void the_body_limit_takes_a_20_mb_image() {
    // 20 MB as base64 is 26.7 MB: the default body limit must hold it.
    QVERIFY(server::ServerOptions{}.max_body_bytes > (20u << 20) / 3 * 4 + (64u << 10));
  }

  // ---- the tiny vision model (needs the engine's vision path) ----

  void a_data_url_image_is_answered_as_the_engine_answers() {
    RunningServer& s = vision();
    const QJsonObject model = json_object(s.client->get("/v1/models").body)["data"].toArray()[0].toObject();
    QVERIFY2(model["capabilities"].toArray().contains("vision"), "/v1/models should say the model sees images");

    const HttpResponse r = s.client->post("/v1/chat/completions",
                                          parts_body({image_part(data_url(exact_)), text_part("What is this?")}));
    QVERIFY2(r.status == 200L, r.body.c_str());
    const QJsonObject response = json_object(r.body);
    const int prompt_tokens = response["usage"].toObject()["prompt_tokens"].toInt();

    // The same turn straight through the engine, loaded alike: the server loses nothing of the image.
    auto engine = Engine::load(vision_load());
    GenerateOptions o;
    o.sampling = SamplingChoice::exactly(varied_sampling_params(5));
    o.max_tokens = 12;
    std::string expected;
    ChatMessage turn{Role::User, "What is this?", {Image{"exact.png", exact_}}};
    const GenerationStats stats = engine->chat({turn}, o, [&](std::string_view t) { expected += t; return true; });
    QCOMPARE(stats.images_encoded, 1);
    QVERIFY(!QString::fromStdString(expected).trimmed().isEmpty());
    QCOMPARE(response_text(response), expected);
    // Without the image the same request answers otherwise: the picture reached the model.
    const HttpResponse plain = s.client->post("/v1/chat/completions", parts_body({text_part("What is this?")}));
    QCOMPARE(plain.status, 200L);
    QVERIFY(response_text(json_object(plain.body)) != expected);
    QCOMPARE(prompt_tokens, stats.prompt_tokens);
    // 16 image tokens (and the image's markers) are part of the prompt.
    QVERIFY(prompt_tokens > engine->info().image_tokens);

    // Streaming gives the same text.
    const StreamResult streamed = read_stream(
        s.client->post("/v1/chat/completions",
                       parts_body({image_part(data_url(exact_)), text_part("What is this?")}, {{"stream", true}}))
            .body);
    QVERIFY(streamed.error.isEmpty());
    QCOMPARE(streamed.text, expected);
  }

  void a_corrupt_or_truncated_image_gets_400_naming_it() {
    RunningServer& s = vision();
    const std::string truncated = exact_.substr(0, exact_.size() / 2);
    std::string garbage = exact_;
    for (size_t i = 40; i < garbage.size(); i += 7) garbage[i] = char(garbage[i] ^ 0x5a);
    // Also a decompression bomb (60000 x 60000 claimed) and a zero-size image.
    for (const std::string& bad : {truncated, garbage, std::string("\x89PNG\r\n\x1a\n", 8),
                                   png_header_only(60000, 60000), png_header_only(0, 64)}) {
      const HttpResponse r = s.client->post("/v1/chat/completions",
                                            parts_body({text_part("See "), image_part(data_url(bad))}));
      QCOMPARE(r.status, 400L);
      QVERIFY2(error_of(r)["message"].toString().contains("messages[0].content[1]"), r.body.c_str());
      QCOMPARE(error_of(r)["code"].toString(), QString("invalid_image"));
    }
    const HttpResponse bomb = s.client->post(
        "/v1/chat/completions", parts_body({image_part(data_url(png_header_only(60000, 60000)))}));
    QVERIFY2(error_of(bomb)["message"].toString().contains("pixels"), bomb.body.c_str());
    // The server still answers a good one afterwards.
    QCOMPARE(s.client->post("/v1/chat/completions", parts_body({image_part(data_url(exact_))})).status, 200L);
  }

  void parallel_requests_each_see_their_own_image() {
    // Two images at once in two slots, then a second turn that reuses the first turn's cache: each
    // answer is the one the engine gives that conversation alone.
    RunningServer& s = vision();
    const std::string wide = read_file(vision_dir() + "/wide.png");
    QVERIFY(wide.size() > 1000);
    auto engine = Engine::load(vision_load());
    GenerateOptions o;
    o.sampling = SamplingChoice::exactly(varied_sampling_params(5));
    o.max_tokens = 12;
    auto alone = [&](const std::vector<ChatMessage>& messages) {
      std::string text;
      engine->chat(messages, o, [&](std::string_view t) { text += t; return true; });
      return text;
    };
    const std::string exact_answer = alone({{Role::User, "Describe.", {Image{"a", exact_}}}});
    const std::string wide_answer = alone({{Role::User, "Describe.", {Image{"b", wide}}}});
    QVERIFY(exact_answer != wide_answer);

    HttpResponse r1, r2;
    std::thread t1([&] { r1 = s.client->post("/v1/chat/completions", parts_body({image_part(data_url(exact_)), text_part("Describe.")})); });
    std::thread t2([&] { r2 = s.client->post("/v1/chat/completions", parts_body({image_part(data_url(wide)), text_part("Describe.")})); });
    t1.join();
    t2.join();
    QVERIFY2(r1.status == 200L && r2.status == 200L, (r1.body + r2.body).c_str());
    QCOMPARE(response_text(json_object(r1.body)), exact_answer);
    QCOMPARE(response_text(json_object(r2.body)), wide_answer);

    // The next turn of the first conversation: its image stays in the prompt, from the cache.
    QJsonObject body = json_object(parts_body({image_part(data_url(exact_)), text_part("Describe.")}));
    QJsonArray messages = body["messages"].toArray();
    messages.append(QJsonObject{{"role", "assistant"}, {"content", QString::fromStdString(exact_answer)}});
    messages.append(QJsonObject{{"role", "user"}, {"content", "And the colours?"}});
    body["messages"] = messages;
    const HttpResponse next =
        s.client->post("/v1/chat/completions", QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString());
    QVERIFY2(next.status == 200L, next.body.c_str());
    const std::string expected_next = alone({{Role::User, "Describe.", {Image{"a", exact_}}},
                                             {Role::Assistant, exact_answer, {}},
                                             {Role::User, "And the colours?", {}}});
    QCOMPARE(response_text(json_object(next.body)), expected_next);
    const QJsonObject usage = json_object(next.body)["usage"].toObject();
    QVERIFY2(usage["prompt_tokens_details"].toObject()["cached_tokens"].toInt() > engine->info().image_tokens,
             next.body.c_str());
  }

  void cleanupTestCase() {
    if (vision_) vision_->server->stop();
    text_->server->stop();
  }
};

QTEST_GUILESS_MAIN(ServerImagesTest)
#include "test_server_images.moc"
