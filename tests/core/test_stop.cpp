// Stop strings across token boundaries, and UTF-8 characters across byte-fallback tokens.
#include <QtTest>

#include "generate/stop_matcher.h"

using kiln::StopMatcher;
using kiln::Utf8Stream;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD

// Feeds every piece and returns what was shown, piece by piece.
std::vector<std::string> feed_all(StopMatcher& m, const std::vector<std::string>& pieces) {
  std::vector<std::string> shown;
  for (const auto& p : pieces) shown.push_back(m.feed(p));
  return shown;
}

}  // namespace

class TestStop : public QObject {
  Q_OBJECT

 private slots:
  void stop_string_split_over_many_pieces() {
    StopMatcher m({"<|end|>"});
    const auto shown = feed_all(m, {"Hello", " <", "|", "en", "d", "|", ">", " after"});
    QCOMPARE(shown[0], std::string("Hello"));
    QCOMPARE(shown[1], std::string(" "));  // "<" is held: it may start the stop string
    for (size_t i = 2; i <= 5; ++i) QCOMPARE(shown[i], std::string());
    QCOMPARE(shown[6], std::string());      // the stop completed: nothing of it is shown
    QVERIFY(m.stopped());
    QCOMPARE(shown[7], std::string());      // after a stop nothing more comes through
    QCOMPARE(m.flush(), std::string());
  }

  void text_before_the_stop_in_the_same_piece_is_shown() {
    StopMatcher m({"STOP"});
    QCOMPARE(m.feed("abc ST"), std::string("abc "));
    QCOMPARE(m.feed("OP and more"), std::string());
    QVERIFY(m.stopped());
    StopMatcher same_piece({"STOP"});
    QCOMPARE(same_piece.feed("x STOP y"), std::string("x "));
    QVERIFY(same_piece.stopped());
  }

  void a_false_start_is_released_once_it_cannot_match() {
    StopMatcher m({"<|end|>"});
    QCOMPARE(m.feed("a <|e"), std::string("a "));
    QCOMPARE(m.feed("x"), std::string("<|ex"));
    QVERIFY(!m.stopped());
    // A held prefix that is itself followed by a new start: release only up to the new start.
    QCOMPARE(m.feed(" <|<|en"), std::string(" <|"));
    QCOMPARE(m.feed("d|>"), std::string());
    QVERIFY(m.stopped());
  }

  void overlapping_prefixes() {
    // "ab" could begin "abc", and its "b" could begin "bd": the longest held suffix is "ab".
    StopMatcher to_bd({"abc", "bd"});
    QCOMPARE(to_bd.feed("ab"), std::string());
    QCOMPARE(to_bd.feed("d"), std::string("a"));  // "bd" matched: "a" is what came before it
    QVERIFY(to_bd.stopped());

    StopMatcher to_abc({"abc", "bd"});
    QCOMPARE(to_abc.feed("ab"), std::string());
    QCOMPARE(to_abc.feed("c"), std::string());
    QVERIFY(to_abc.stopped());

    StopMatcher neither({"abc", "bd"});
    QCOMPARE(neither.feed("ab"), std::string());
    QCOMPARE(neither.feed("x"), std::string("abx"));
    QVERIFY(!neither.stopped());
    QCOMPARE(neither.feed("b"), std::string());    // may start "bd"
    QCOMPARE(neither.flush(), std::string("b"));   // generation ended: the held text is real text
  }

  void the_earliest_of_several_stops_wins() {
    StopMatcher m({"world", "lo"});
    QCOMPARE(m.feed("hello world"), std::string("hel"));
    QVERIFY(m.stopped());
  }

  void no_stop_strings_pass_everything_through() {
    StopMatcher none({});
    QCOMPARE(none.feed("any <|end|> text"), std::string("any <|end|> text"));
    StopMatcher empty_only({""});  // an empty stop string must not stop at once
    QCOMPARE(empty_only.feed("abc"), std::string("abc"));
    QVERIFY(!empty_only.stopped());
    StopMatcher unused({"zzz"});
    std::string all;
    for (const char* p : {"The ", "quick ", "brown ", "fox"}) all += unused.feed(p);
    all += unused.flush();
    QCOMPARE(all, std::string("The quick brown fox"));
  }

  void multibyte_stop_string() {
    StopMatcher m({"日本"});
    QCOMPARE(m.feed("語 \xE6\x97"), std::string("語 "));
    QCOMPARE(m.feed("\xA5\xE6\x9C\xAC!"), std::string());
    QVERIFY(m.stopped());
  }

  void emoji_fed_byte_by_byte() {
    const std::string emoji = "\xF0\x9F\x98\x80";  // U+1F600, four bytes
    Utf8Stream s;
    QCOMPARE(s.feed(emoji.substr(0, 1)), std::string());
    QCOMPARE(s.feed(emoji.substr(1, 1)), std::string());
    QCOMPARE(s.feed(emoji.substr(2, 1)), std::string());
    QCOMPARE(s.feed(emoji.substr(3, 1)), emoji);
    QCOMPARE(s.flush(), std::string());
    QCOMPARE(s.feed("a" + emoji.substr(0, 2)), std::string("a"));
    QCOMPARE(s.feed(emoji.substr(2) + "b"), emoji + "b");
  }

  void invalid_bytes_become_replacement_characters() {
    Utf8Stream s;
    QCOMPARE(s.feed("a\x80" "b"), "a" + kFffd + "b");          // stray continuation byte
    QCOMPARE(s.feed("\xFF"), kFffd);                           // never valid in UTF-8
    QCOMPARE(s.feed("\xC0\xAF"), kFffd + kFffd);               // overlong "/"
    QCOMPARE(s.feed("\xED\xA0\x80"), kFffd + kFffd + kFffd);   // a UTF-16 surrogate
    QCOMPARE(s.feed("\xE6\x97" "A"), kFffd + "A");             // a cut-off character
    QCOMPARE(s.feed("\xF0\x9F"), std::string());
    QCOMPARE(s.flush(), kFffd);                                // incomplete at the end
    QCOMPARE(s.flush(), std::string());
  }

  void valid_text_passes_unchanged_in_any_split() {
    const std::string text = "ascii é 日本 😀 👨‍👩‍👧 \xF4\x8F\xBF\xBF end";
    for (size_t chunk = 1; chunk <= 5; ++chunk) {
      Utf8Stream s;
      std::string out;
      for (size_t i = 0; i < text.size(); i += chunk) out += s.feed(text.substr(i, chunk));
      out += s.flush();
      QCOMPARE(out, text);
    }
  }
};

QTEST_APPLESS_MAIN(TestStop)
#include "test_stop.moc"
