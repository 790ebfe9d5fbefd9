// Reads the Hugging Face reference logits of a fixture and compares engine logits with them.
#pragma once

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>
#include <string>
#include <vector>

namespace kiln::test {

struct ReferenceCase {
  std::vector<int32_t> ids;
  std::vector<std::vector<float>> logits;  // [position][vocab]
};

struct Reference {
  std::vector<ReferenceCase> cases;
  std::vector<int32_t> greedy_prompt, greedy_new_tokens;
};

inline std::string fixture_dir(const char* name) { return std::string(KILN_TEST_DATA) + "/fixtures/" + name; }

// Reads reference.json (or a *.llama-logits.json of the same shape).
inline Reference read_reference(const std::string& path) {
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", path.c_str());
  const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
  Reference ref;
  for (const QJsonValue& c : root["cases"].toArray()) {
    ReferenceCase rc;
    for (const QJsonValue& id : c.toObject()["input_ids"].toArray()) rc.ids.push_back(id.toInt());
    for (const QJsonValue& row : c.toObject()["logits"].toArray()) {
      std::vector<float> r;
      for (const QJsonValue& v : row.toArray()) r.push_back(float(v.toDouble()));
      rc.logits.push_back(std::move(r));
    }
    ref.cases.push_back(std::move(rc));
  }
  const QJsonObject greedy = root["greedy"].toObject();
  for (const QJsonValue& v : greedy["prompt"].toArray()) ref.greedy_prompt.push_back(v.toInt());
  for (const QJsonValue& v : greedy["new_tokens"].toArray()) ref.greedy_new_tokens.push_back(v.toInt());
  return ref;
}

struct Agreement {
  double relative_error = 0;  // ||ours - ref|| / ||ref|| over the whole case
  double top1 = 0;            // fraction of positions whose argmax agrees
  double kl = 0;              // mean KL(ref || ours) over positions, in nats
};

inline Agreement compare(const std::vector<std::vector<float>>& ours, const std::vector<std::vector<float>>& ref) {
  Agreement a;
  double diff = 0, norm = 0;
  int agree = 0;
  for (size_t p = 0; p < ref.size(); ++p) {
    const auto& o = ours[p];
    const auto& r = ref[p];
    size_t best_o = 0, best_r = 0;
    double max_o = o[0], max_r = r[0];
    for (size_t v = 0; v < r.size(); ++v) {
      diff += (double(o[v]) - r[v]) * (double(o[v]) - r[v]);
      norm += double(r[v]) * r[v];
      if (o[v] > o[best_o]) best_o = v;
      if (r[v] > r[best_r]) best_r = v;
      max_o = std::max(max_o, double(o[v]));
      max_r = std::max(max_r, double(r[v]));
    }
    agree += best_o == best_r;
    double zo = 0, zr = 0;
    for (size_t v = 0; v < r.size(); ++v) {
      zo += std::exp(o[v] - max_o);
      zr += std::exp(r[v] - max_r);
    }
    double kl = 0;
    for (size_t v = 0; v < r.size(); ++v) {
      const double lr = r[v] - max_r - std::log(zr), lo = o[v] - max_o - std::log(zo);
      kl += std::exp(lr) * (lr - lo);
    }
    a.kl += kl;
  }
  a.relative_error = std::sqrt(diff / norm);
  a.top1 = double(agree) / ref.size();
  a.kl /= ref.size();
  return a;
}

}  // namespace kiln::test
