// A conversation that outgrows the context: the oldest turns roll off, whole, the system prompt
// and the latest question stay, no more goes than needed, and an engine that keeps the same start
// reuses its KV cache.
#include <QtTest>

#include "fixture_reference.h"
#include "generate/chat_roll_off.h"
#include "generate/chat_template.h"
#include "kiln/engine.h"
#include "tokenizer/tokenizer.h"

using namespace kiln;
using namespace kiln::test;

namespace {

Tokenizer fixture_tokenizer() { return Tokenizer::from_file(fixture_dir("tiny-gemma3-a") + "/tokenizer.model"); }

// A system prompt and `turns` question/answer pairs, then one more question.
std::vector<ChatMessage> conversation(int turns) {
  std::vector<ChatMessage> chat{{Role::System, "You answer in one short sentence."}};
  for (int i = 0; i < turns; ++i) {
    chat.push_back({Role::User, "Question number " + std::to_string(i) + ": what does the licence permit?"});
    chat.push_back({Role::Assistant, "Answer number " + std::to_string(i) + ": copying, changing and sharing it."});
  }
  chat.push_back({Role::User, "And the last question: may I sell it?"});
  return chat;
}

// `chat` without its first `n` non-system messages.
std::vector<ChatMessage> without_first(const std::vector<ChatMessage>& chat, int n) {
  std::vector<ChatMessage> kept{chat.front()};
  kept.insert(kept.end(), chat.begin() + 1 + n, chat.end());
  return kept;
}

}  // namespace

class TestChatRollOff : public QObject {
  Q_OBJECT

 private slots:
  void a_conversation_that_fits_is_untouched() {
    const Tokenizer tokenizer = fixture_tokenizer();
    const auto chat = conversation(3);
    const FittedChat fitted = fit_chat(tokenizer, chat, 4096, 100, 0);
    QCOMPARE(fitted.rolled_off, 0);
    QVERIFY(fitted.tokens == render_chat(tokenizer, chat));
  }

  void the_oldest_turns_go_and_no_more_than_needed() {
    const Tokenizer tokenizer = fixture_tokenizer();
    const auto chat = conversation(12);
    const int full = int(render_chat(tokenizer, chat).size());
    const int context = full * 2 / 3, room = 20;
    const FittedChat fitted = fit_chat(tokenizer, chat, context, room, 0);
    QVERIFY2(fitted.rolled_off > 0, "a conversation past the context must lose turns");
    QCOMPARE(fitted.rolled_off % 2, 0);  // whole question/answer pairs: what is left starts with a question
    // The system prompt and everything after the rolled-off turns, the latest question last.
    QVERIFY(fitted.tokens == render_chat(tokenizer, without_first(chat, fitted.rolled_off)));
    QVERIFY(int(fitted.tokens.size()) + room <= context);
    // One pair fewer would not have fit: nothing went that could have stayed.
    const int one_fewer = int(render_chat(tokenizer, without_first(chat, fitted.rolled_off - 2)).size());
    QVERIFY2(one_fewer + room > context, qPrintable(QString::number(one_fewer)));
  }

  void at_least_keeps_the_earlier_start() {
    const Tokenizer tokenizer = fixture_tokenizer();
    const auto chat = conversation(3);
    const FittedChat fitted = fit_chat(tokenizer, chat, 4096, 100, 2);
    QCOMPARE(fitted.rolled_off, 2);
    QVERIFY(fitted.tokens == render_chat(tokenizer, without_first(chat, 2)));
    // Never the latest question, whatever the caller asks.
    QCOMPARE(fit_chat(tokenizer, chat, 4096, 100, 99).rolled_off, 6);
  }

  void a_question_longer_than_the_context_is_an_error() {
    const Tokenizer tokenizer = fixture_tokenizer();
    std::vector<ChatMessage> chat = conversation(1);
    std::string long_question;
    for (int i = 0; i < 200; ++i) long_question += "permission is hereby granted ";
    chat.back().content = long_question;
    QVERIFY_THROWS_EXCEPTION(Error, fit_chat(tokenizer, chat, 256, 16, 0));
  }

  // On the engine: the second answer keeps the first one's start, so the cache is reused; with
  // roll-off off, the same conversation is refused as before.
  void the_engine_rolls_off_and_reuses_its_cache() {
    LoadOptions o;
    o.path = fixture_dir("tiny-gemma3-a");
    o.backend = BackendKind::Cpu;
    o.context_length = 192;
    o.threads = 2;
    auto engine = Engine::load(o);
    GenerateOptions g;
    g.sampling.temperature = 0;
    g.max_tokens = 0;  // prefill only: the cache then holds exactly the prompt
    g.roll_off_old_turns = true;
    // A conversation that must lose turns and, once it has, leaves room for one more short turn.
    const Tokenizer tokenizer = fixture_tokenizer();
    int turns = 4;
    for (; turns < 40; ++turns) {
      const FittedChat f = fit_chat(tokenizer, conversation(turns), 192, 0, 0);
      if (f.rolled_off > 0 && 192 - int(f.tokens.size()) >= 40) break;
    }
    auto chat = conversation(turns);
    QVERIFY(int(engine->chat_tokens(chat).size()) > 192);
    const GenerationStats first = engine->chat(chat, g, [](std::string_view) { return true; });
    QVERIFY(first.rolled_off_messages > 0);
    QVERIFY(first.prompt_tokens <= 192);

    chat.push_back({Role::Assistant, "Yes."});
    chat.push_back({Role::User, "Thanks."});
    g.roll_off_at_least = first.rolled_off_messages;
    const GenerationStats second = engine->chat(chat, g, [](std::string_view) { return true; });
    QCOMPARE(second.rolled_off_messages, first.rolled_off_messages);
    QCOMPARE(second.cached_prompt_tokens, first.prompt_tokens);

    GenerateOptions strict = g;
    strict.roll_off_old_turns = false;
    QVERIFY_THROWS_EXCEPTION(Error, engine->chat(chat, strict, [](std::string_view) { return true; }));
  }
};

QTEST_APPLESS_MAIN(TestChatRollOff)
#include "test_chat_roll_off.moc"
