// Image soft tokens on the Vulkan backend (Backend::forward_embedded) against the CPU backend's:
// rows in place of the token embeddings and bidirectional attention inside each span, on every
// layer, on the tiny vision fixture, whose sliding window (8) is shorter than an image (16 tokens).
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>

#include "model_fixture.h"
#include "runtime/cpu/cpu_backend.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// An image at positions [pos, pos + count): random rows, about the size of the fixture's scaled
// token embeddings.
struct SoftImage {
  int pos = 0, count = 0;
  std::vector<float> rows;  // [count][hidden]
};

SoftImage soft_image(int pos, int count, int hidden, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  SoftImage im{pos, count, std::vector<float>(size_t(count) * hidden)};
  for (float& v : im.rows) v = normal(rng);
  return im;
}

// Token ids in [4, vocab), with 0 at the images' positions (ignored there).
std::vector<int32_t> prompt(int n, int vocab, const std::vector<SoftImage>& images, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(4, vocab - 1);
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int32_t& t : ids) t = id(rng);
  ids[0] = 2;  // BOS
  for (const SoftImage& im : images) std::fill(ids.begin() + im.pos, ids.begin() + im.pos + im.count, 0);
  return ids;
}

// Every position's logits of one forward_embedded call from position 0.
std::vector<std::vector<float>> embedded_logits(Backend& b, const std::vector<int32_t>& ids,
                                                const std::vector<SoftImage>& images, int vocab) {
  std::vector<Backend::EmbeddingSpan> spans;
  for (const SoftImage& im : images) spans.push_back({im.pos, im.count, im.rows.data()});
  std::vector<float> buf(ids.size() * size_t(vocab));
  b.forward_embedded(0, ids, 0, spans, true, buf.data());
  std::vector<std::vector<float>> rows;
  for (size_t p = 0; p < ids.size(); ++p)
    rows.emplace_back(buf.begin() + p * vocab, buf.begin() + (p + 1) * vocab);
  return rows;
}

// What the CPU backend computes, in one call from position 0.
std::vector<std::vector<float>> expected(std::shared_ptr<const Gemma3Weights> w, const std::vector<int32_t>& ids,
                                         const std::vector<SoftImage>& images) {
  const int vocab = w->config.vocab_size;
  auto cpu = make_cpu_backend(std::move(w), CpuOptions{int(ids.size()), 2});
  return embedded_logits(*cpu, ids, images, vocab);
}

std::vector<std::vector<float>> text_logits(Backend& b, const std::vector<int32_t>& ids, int vocab) {
  return run(b, ids, 0, vocab);
}

std::vector<std::vector<float>> slice(const std::vector<std::vector<float>>& rows, int begin, int end) {
  return {rows.begin() + begin, rows.begin() + end};
}

// The tiny vision fixture's text model (tests/data/vision).
std::shared_ptr<const Gemma3Weights> load_vision_model() {
  const Checkpoint ck = open_checkpoint(std::string(KILN_TEST_DATA) + "/vision");
  return std::make_shared<Gemma3Weights>(load_weights(ck.config, *ck.tensors, DType::F32, 2, nullptr));
}

}  // namespace

class VulkanSoftTokens : public QObject {
  Q_OBJECT
 private slots:
  // One batch: a 16-token image (twice the window) and a 6-token one, text before, between and
  // after, through each batched attention kernel the plan may pick (one query a workgroup, and
  // blocks of 4, 8 and 16 queries).
  void images_match_cpu_data() {
    QTest::addColumn<QString>("queries");
    for (const char* q : {"0", "4", "8", "16"}) QTest::newRow(q) << QString(q);
  }
  void images_match_cpu() {
    QFETCH(QString, queries);
    auto w = load_vision_model();
    const Gemma3Config& c = w->config;
    QVERIFY(c.sliding_window < 16);
    const std::vector<SoftImage> images = {soft_image(5, 16, c.hidden_size, 1), soft_image(30, 6, c.hidden_size, 2)};
    const std::vector<int32_t> ids = prompt(44, c.vocab_size, images, 3);
    auto gpu = vulkan(w, {{"prefill_queries", queries.toStdString()}});
    const Agreement a = compare(embedded_logits(*gpu, ids, images, c.vocab_size), expected(w, ids, images));
    QVERIFY2(a.relative_error < 1e-4, qPrintable(QString("relative error %1").arg(a.relative_error)));
    QCOMPARE(a.top1, 1.0);
    // Decode after the images reads their keys from the cache.
    std::vector<float> next(size_t(c.vocab_size));
    std::vector<int32_t> longer = ids;
    longer.push_back(7);
    gpu->forward(std::span(longer).last(1), int(ids.size()), false, next.data());
    const Agreement d = compare({next}, {expected(w, longer, images).back()});
    QVERIFY2(d.relative_error < 1e-4, qPrintable(QString("decode after: relative error %1").arg(d.relative_error)));
  }

  // A logits buffer shorter than an image (a real vocabulary leaves 64 rows): the batch still
  // holds the image whole, and its logits come back a slice at a time.
  void logits_in_slices() {
    auto w = load_vision_model();
    const Gemma3Config& c = w->config;
    const std::vector<SoftImage> images = {soft_image(3, 16, c.hidden_size, 1), soft_image(21, 5, c.hidden_size, 2)};
    const std::vector<int32_t> ids = prompt(30, c.vocab_size, images, 3);
    auto gpu = vulkan(w, {{"max_logit_rows", "8"}});
    const Agreement a = compare(embedded_logits(*gpu, ids, images, c.vocab_size), expected(w, ids, images));
    QVERIFY2(a.relative_error < 1e-4, qPrintable(QString("relative error %1").arg(a.relative_error)));
    QCOMPARE(a.top1, 1.0);
  }

  // The tests above cannot pass by ignoring the spans: the rows change the logits from the image
  // on, and attention inside an image is bidirectional: its first position sees its last row.
  void spans_change_the_logits() {
    auto w = load_vision_model();
    const Gemma3Config& c = w->config;
    std::vector<SoftImage> images = {soft_image(5, 16, c.hidden_size, 1)};
    const std::vector<int32_t> ids = prompt(30, c.vocab_size, images, 3);
    auto gpu = vulkan(w);
    const auto with_image = embedded_logits(*gpu, ids, images, c.vocab_size);
    const auto text = text_logits(*gpu, ids, c.vocab_size);
    QVERIFY(compare(slice(with_image, 0, 5), slice(text, 0, 5)).relative_error < 1e-6);  // before it: the same
    QVERIFY(compare(slice(with_image, 5, 30), slice(text, 5, 30)).relative_error > 0.1);
    // Only the image's last row changes: every position of the image sees it, text before it does not.
    for (int i = 0; i < c.hidden_size; ++i) images[0].rows[15 * size_t(c.hidden_size) + i] *= -1.0f;
    const auto changed = embedded_logits(*gpu, ids, images, c.vocab_size);
    QCOMPARE(compare(slice(changed, 0, 5), slice(with_image, 0, 5)).relative_error, 0.0);
    QVERIFY(compare(slice(changed, 5, 6), slice(with_image, 5, 6)).relative_error > 1e-2);
  }

  // More than one batch (512 tokens a batch): an image that would straddle the first batch's end
  // ends that batch before it; ten images in the next would be more than one batch's attention
  // takes (8), so it ends before the ninth.
  void batches_end_before_an_image() {
    auto w = load_vision_model();
    const Gemma3Config& c = w->config;
    std::vector<SoftImage> images = {soft_image(40, 16, c.hidden_size, 20), soft_image(500, 16, c.hidden_size, 21)};
    for (int i = 0; i < 10; ++i) images.push_back(soft_image(520 + 7 * i, 2 + i % 3, c.hidden_size, 30 + i));
    const std::vector<int32_t> ids = prompt(600, c.vocab_size, images, 4);
    auto gpu = vulkan(w, {}, 640);
    QCOMPARE(counter(*gpu, "max_batch"), 512.0);
    const Agreement a = compare(embedded_logits(*gpu, ids, images, c.vocab_size), expected(w, ids, images));
    QVERIFY2(a.relative_error < 1e-4, qPrintable(QString("relative error %1").arg(a.relative_error)));
    QCOMPARE(a.top1, 1.0);
    // An image longer than a batch cannot be run.
    std::vector<int32_t> long_ids(530, 5);
    const SoftImage huge = soft_image(1, 520, c.hidden_size, 40);
    const Backend::EmbeddingSpan span[] = {{huge.pos, huge.count, huge.rows.data()}};
    std::vector<float> logits(size_t(c.vocab_size));
    QVERIFY_THROWS_EXCEPTION(Error, gpu->forward_embedded(0, long_ids, 0, span, false, logits.data()));
  }

  // Text alone takes exactly the pass it took before any image: bitwise the same logits, with
  // the same number of dispatches, on a backend that has run images and on a fresh one.
  void text_only_is_unchanged() {
    auto w = load_vision_model();
    const Gemma3Config& c = w->config;
    const std::vector<SoftImage> images = {soft_image(3, 16, c.hidden_size, 1)};
    const std::vector<int32_t> ids = prompt(24, c.vocab_size, {}, 5);
    auto fresh = vulkan(w);
    const auto before = text_logits(*fresh, ids, c.vocab_size);
    std::vector<float> last(size_t(c.vocab_size));
    fresh->forward(ids, 0, false, last.data());
    const double dispatches = counter(*fresh, "dispatches_last_call");
    auto gpu = vulkan(w);
    embedded_logits(*gpu, prompt(24, c.vocab_size, images, 6), images, c.vocab_size);
    const auto after = text_logits(*gpu, ids, c.vocab_size);
    for (size_t p = 0; p < ids.size(); ++p)
      QVERIFY(std::memcmp(before[p].data(), after[p].data(), before[p].size() * 4) == 0);
    gpu->forward(ids, 0, false, last.data());
    QCOMPARE(counter(*gpu, "dispatches_last_call"), dispatches);
    // forward_embedded without spans is forward().
    std::vector<float> none(ids.size() * size_t(c.vocab_size));
    gpu->forward_embedded(0, ids, 0, {}, true, none.data());
    for (size_t p = 0; p < ids.size(); ++p)
      QVERIFY(std::memcmp(before[p].data(), none.data() + p * c.vocab_size, before[p].size() * 4) == 0);
  }

  // Bad spans: a clear error, nothing run.
  void bad_spans_are_refused() {
    auto w = load_vision_model();
    const Gemma3Config& c = w->config;
    auto gpu = vulkan(w);
    const std::vector<int32_t> ids = prompt(20, c.vocab_size, {}, 7);
    const SoftImage im = soft_image(15, 8, c.hidden_size, 1);
    const Backend::EmbeddingSpan outside[] = {{im.pos, im.count, im.rows.data()}};
    std::vector<float> logits(size_t(c.vocab_size));
    QVERIFY_THROWS_EXCEPTION(Error, gpu->forward_embedded(0, ids, 0, outside, false, logits.data()));
    const Backend::EmbeddingSpan overlapping[] = {{2, 4, im.rows.data()}, {4, 4, im.rows.data()}};
    QVERIFY_THROWS_EXCEPTION(Error, gpu->forward_embedded(0, ids, 0, overlapping, false, logits.data()));
  }
};

QTEST_GUILESS_MAIN(VulkanSoftTokens)
#include "test_soft_tokens.moc"
