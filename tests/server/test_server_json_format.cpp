// response_format json_object / json_schema on the bundled demo model: sampled at temperature 1,
// every answer parses and validates (checked here with Qt's JSON parser and a hand-written check,
// independent of the server's grammar), streamed or not; a schema the grammar cannot enforce is a 400.
#include <curl/curl.h>

#include <QJsonDocument>
#include <QtTest>

#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;

namespace {

const char* kSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 12},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "color": {"enum": ["red", "green", "blue"]},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "minItems": 1, "maxItems": 3},
    "score": {"type": "number", "minimum": 0, "maximum": 1},
    "active": {"type": "boolean"},
    "note": {"type": "null"},
    "kind": {"const": "person"}
  },
  "required": ["name", "age", "color", "tags", "active", "kind"],
  "additionalProperties": false
})";

// Characters, as JSON Schema counts string length.
int characters(const QString& s) { return int(s.toUcs4().size()); }

// The schema above, checked by hand. Returns "" when `text` is a valid document, else why not.
QString violation(const std::string& text) {
  QJsonParseError error;
  const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(text), &error);
  if (error.error != QJsonParseError::NoError) return "does not parse: " + error.errorString();
  if (!doc.isObject()) return "not an object";
  const QJsonObject o = doc.object();
  for (const char* key : {"name", "age", "color", "tags", "active", "kind"})
    if (!o.contains(key)) return QString("lacks ") + key;
  for (const QString& key : o.keys())
    if (!QStringList{"name", "age", "color", "tags", "score", "active", "note", "kind"}.contains(key))
      return "extra key " + key;
  const QJsonValue name = o["name"], age = o["age"], tags = o["tags"];
  if (!name.isString() || characters(name.toString()) < 1 || characters(name.toString()) > 12) return "bad name";
  const double a = age.toDouble(-1);
  if (!age.isDouble() || a != std::floor(a) || a < 0 || a > 120) return "bad age";
  if (!QStringList{"red", "green", "blue"}.contains(o["color"].toString())) return "bad color";
  if (!tags.isArray() || tags.toArray().isEmpty() || tags.toArray().size() > 3) return "bad tags";
  for (const auto& t : tags.toArray())
    if (!t.isString() || characters(t.toString()) > 8) return "bad tag";
  if (o.contains("score") && (!o["score"].isDouble() || o["score"].toDouble() < 0 || o["score"].toDouble() > 1))
    return "bad score";
  if (!o["active"].isBool()) return "bad active";
  if (o.contains("note") && !o["note"].isNull()) return "bad note";
  if (o["kind"].toString() != "person") return "bad kind";
  return {};
}

QJsonObject schema_format() {
  const QJsonObject schema = QJsonDocument::fromJson(kSchema).object();
  return {{"type", "json_schema"}, {"json_schema", QJsonObject{{"name", "person"}, {"schema", schema}}}};
}

}  // namespace

class ServerJsonFormatTest : public QObject {
  Q_OBJECT

  std::unique_ptr<RunningServer> s_;
  const HttpClient& client() const { return *s_->client; }

 private slots:
  void initTestCase() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    LoadOptions load;
    load.path = std::string(KILN_TEST_DATA) + "/../../resources/models/kiln-demo";
    load.precision = Precision::F32;
    load.backend = BackendKind::Cpu;
    load.context_length = 1024;
    load.threads = 1;
    s_ = start_server(load, {});
  }
  void cleanupTestCase() {
    s_.reset();
    curl_global_cleanup();
  }

  void json_schema_output_always_validates() {
    for (int run = 0; run < 50; ++run) {
      const HttpResponse r = client().post(
          "/v1/chat/completions",
          chat_body("Describe a person as JSON.", {{"temperature", 1.0}, {"seed", 1000 + run}, {"max_tokens", 400},
                                                  {"response_format", schema_format()}}));
      QCOMPARE(r.status, 200L);
      const QJsonObject body = json_object(r.body);
      const std::string text = response_text(body);
      const QString why = violation(text);
      QVERIFY2(why.isEmpty(), qPrintable(QString("run %1: %2: %3").arg(run).arg(why, QString::fromStdString(text))));
      QCOMPARE(body["choices"].toArray()[0].toObject()["finish_reason"].toString(), QString("stop"));
    }
  }

  void streamed_json_schema_output_validates() {
    for (int run = 0; run < 5; ++run) {
      const HttpResponse r = client().post(
          "/v1/chat/completions",
          chat_body("A person, please.", {{"temperature", 1.0}, {"seed", 77 + run}, {"max_tokens", 400}, {"stream", true},
                                          {"response_format", schema_format()}}));
      QCOMPARE(r.status, 200L);
      const StreamResult stream = read_stream(r.body);
      QVERIFY2(violation(stream.text).isEmpty(), stream.text.c_str());
      QCOMPARE(stream.finish_reason, std::string("stop"));
    }
  }

  void json_object_output_is_an_object() {
    for (int run = 0; run < 10; ++run) {
      const HttpResponse r = client().post(
          "/v1/completions",
          completion_body("Once upon a time", {{"temperature", 1.0}, {"seed", 5 + run}, {"max_tokens", 300},
                                              {"response_format", QJsonObject{{"type", "json_object"}}}}));
      QCOMPARE(r.status, 200L);
      const QJsonObject body = json_object(r.body);
      const std::string text = response_text(body);
      if (body["choices"].toArray()[0].toObject()["finish_reason"].toString() == "length") continue;  // cut short
      QJsonParseError error;
      const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(text), &error);
      QVERIFY2(error.error == QJsonParseError::NoError && doc.isObject(), text.c_str());
    }
  }

  void unsupported_schemas_are_400_naming_the_keyword() {
    const QJsonObject pattern{{"type", "json_schema"},
                              {"json_schema", QJsonObject{{"schema", QJsonObject{{"type", "string"}, {"pattern", "^a+$"}}}}}};
    const HttpResponse r = client().post("/v1/chat/completions", chat_body("x", {{"response_format", pattern}}));
    QCOMPARE(r.status, 400L);
    const QJsonObject error = json_object(r.body)["error"].toObject();
    QCOMPARE(error["param"].toString(), QString("response_format.json_schema.schema"));
    QVERIFY2(error["message"].toString().contains("'pattern'"), r.body.c_str());

    const HttpResponse bad_type =
        client().post("/v1/chat/completions", chat_body("x", {{"response_format", QJsonObject{{"type", "yaml"}}}}));
    QCOMPARE(bad_type.status, 400L);
    QCOMPARE(json_object(bad_type.body)["error"].toObject()["param"].toString(), QString("response_format.type"));
  }
};

QTEST_GUILESS_MAIN(ServerJsonFormatTest)
#include "test_server_json_format.moc"
