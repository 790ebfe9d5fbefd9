#include "engine_wording.h"

#include <QLocale>
#include <QRegularExpression>
#include <functional>
#include <vector>

#include "kiln/hardware.h"

namespace kiln::gui {

namespace {

using Match = QRegularExpressionMatch;
struct Phrase {
  QRegularExpression pattern;  // the whole English text, as core/ writes it
  std::function<QString(const Match&)> say;
};

// Each phrase core/ writes for reasons and notes (runtime/npu/npu_detect.cpp, runtime/vulkan/device.cpp,
// engine/engine_load.cpp, runtime/npu/attention_scheduler.cpp). A phrase changed there falls back to
// the English text; the translation test lists the ones it feeds.
const std::vector<Phrase>& phrases() {
  static const auto re = [](const char* pattern) { return QRegularExpression(QStringLiteral("^") + pattern + "$"); };
  static const std::vector<Phrase> table = {
      // The NPU.
      {re(R"(no (\S+) device: no NPU driver is loaded \(Ryzen AI NPUs need the amdxdna driver, Linux 6\.14 or later\))"),
       [](const Match& m) {
         return EngineWording::tr("no %1 device: no NPU driver is loaded (Ryzen AI NPUs need the amdxdna driver, Linux 6.14 or later)")
             .arg(m.captured(1));
       }},
      {re(R"(the attention kernel is built for the Phoenix NPU \(npu1\), not (.+))"),
       [](const Match& m) { return EngineWording::tr("the attention kernel is built for the Phoenix NPU (npu1), not %1").arg(m.captured(1)); }},
      {re(R"(cannot open (\S+) \(add your user to the group that owns it, usually 'render'\))"),
       [](const Match& m) {
         return EngineWording::tr("cannot open %1 (add your user to the group that owns it, usually “render”)").arg(m.captured(1));
       }},
      {re(R"(Kiln was built without XRT \(the NPU needs the XRT built with AMD's xdna-driver\))"),
       [](const Match&) { return EngineWording::tr("Kiln was built without XRT (the NPU needs the XRT built with AMD’s xdna-driver)"); }},
      {re(R"(Kiln was built with XRT (\S+), which has no xrt::hw_context \(the NPU needs the XRT built with AMD's xdna-driver\))"),
       [](const Match& m) {
         return EngineWording::tr("Kiln was built with XRT %1, which has no xrt::hw_context (the NPU needs the XRT built with AMD’s xdna-driver)")
             .arg(m.captured(1));
       }},
      {re(R"(the NPU kernels are not installed \(no (\S+); kernels/npu/README\.md says how to build them\))"),
       [](const Match& m) { return EngineWording::tr("the NPU kernels are not installed (%1 is missing)").arg(m.captured(1)); }},
      {re(R"((\S+) is driven by '(.*)', not amdxdna: no Ryzen AI NPU)"),
       [](const Match& m) { return EngineWording::tr("%1 is driven by “%2”, not amdxdna: no Ryzen AI NPU").arg(m.captured(1), m.captured(2)); }},
      {re("Kiln was built without NPU support"), [](const Match&) { return EngineWording::tr("Kiln was built without NPU support"); }},
      {re("no NPU was found"), [](const Match&) { return EngineWording::tr("no NPU was found"); }},
      {re(R"(NPU attention was asked for, but (.+); attention runs on the (\w+))"),
       [](const Match& m) {
         return EngineWording::tr("NPU attention was asked for, but %1; attention runs on the %2")
             .arg(EngineWording::text(m.captured(1).toStdString()), m.captured(2).toUpper());
       }},
      {re("attention on the GPU needs the Vulkan backend; attention runs on the CPU"),
       [](const Match&) { return EngineWording::tr("attention on the GPU needs the Vulkan backend; attention runs on the CPU"); }},
      // Vulkan: why it is not used, for the machine and for a load.
      {re(R"(Vulkan works but found no device \(no GPU driver installed\?\))"),
       [](const Match&) { return EngineWording::tr("Vulkan works but found no device (no GPU driver installed?)"); }},
      {re(R"(Vulkan: no device found \(no GPU driver installed\?\))"),
       [](const Match&) { return EngineWording::tr("no Vulkan device found (no GPU driver installed?)"); }},
      {re(R"(Vulkan: no usable device \((.*a CPU implementation of Vulkan.*)\))"),
       [](const Match&) { return EngineWording::tr("the only Vulkan device is software Vulkan, which runs only when Vulkan is chosen in Settings"); }},
      {re(R"(Vulkan: no usable device \((.*)\))"),
       [](const Match&) { return EngineWording::tr("no Vulkan device Kiln can use (the Hardware page says why)"); }},
      {re(R"(Vulkan not used: (.+); running on the CPU)"),
       [](const Match& m) {
         return EngineWording::tr("Vulkan not used: %1; running on the CPU").arg(EngineWording::text(m.captured(1).toStdString()));
       }},
      {re(R"(the Vulkan backend keeps attention on the GPU; .*)"),
       [](const Match&) { return EngineWording::tr("the Vulkan backend keeps attention on the GPU; the NPU attention setting applies to the CPU backend"); }},
      {re("Kiln was built without Vulkan; running on the CPU"),
       [](const Match&) { return EngineWording::tr("Kiln was built without Vulkan; running on the CPU"); }},
      // The default context, cut to memory (engine/context_budget.h).
      {re(R"(the context is (\d+) tokens, not the (\d+) the model was trained for: what fits in (.+) beside the weights)"),
       [](const Match& m) {
         const QString where = m.captured(3) == QLatin1String("RAM") ? EngineWording::tr("RAM")
                               : EngineWording::tr("the memory of %1").arg(m.captured(3).mid(int(std::string_view("the memory of ").size())));
         return EngineWording::tr("the context is %1 tokens, not the %2 the model was trained for: that is what fits in %3 beside the weights")
             .arg(QLocale().toString(m.captured(1).toInt()), QLocale().toString(m.captured(2).toInt()), where);
       }},
      {re(R"(embedding \(also the output projection\) held in (\S+))"),
       [](const Match& m) { return EngineWording::tr("embedding (also the output projection) held in %1").arg(m.captured(1)); }},
      // A device's missing capability (runtime/vulkan/device.cpp).
      {re(R"(Vulkan (\S+) \(Kiln needs 1\.1 or newer\))"),
       [](const Match& m) { return EngineWording::tr("Vulkan %1 (Kiln needs 1.1 or newer)").arg(m.captured(1)); }},
      {re(R"(no buffer device addresses \(Vulkan 1\.2 bufferDeviceAddress\))"),
       [](const Match&) { return EngineWording::tr("no buffer device addresses (Vulkan 1.2 bufferDeviceAddress)"); }},
      {re("no compute queue"), [](const Match&) { return EngineWording::tr("no compute queue"); }},
      {re("no subgroup arithmetic in compute shaders"),
       [](const Match&) { return EngineWording::tr("no subgroup arithmetic in compute shaders"); }},
      {re(R"(subgroup size (\d+) \(Kiln needs at least 4\))"),
       [](const Match& m) { return EngineWording::tr("subgroup size %1 (Kiln needs at least 4)").arg(m.captured(1)); }},
      {re("workgroups of 256 invocations not supported"),
       [](const Match&) { return EngineWording::tr("workgroups of 256 invocations not supported"); }},
      {re(R"(only (\d+) bytes of shared memory)"),
       [](const Match& m) { return EngineWording::tr("only %1 bytes of shared memory").arg(m.captured(1)); }},
      {re("push constants under 128 bytes"), [](const Match&) { return EngineWording::tr("push constants under 128 bytes"); }},
      {re("fewer than 10 storage buffers a shader"),
       [](const Match&) { return EngineWording::tr("fewer than 10 storage buffers a shader"); }},
  };
  return table;
}

// What is left of an unknown text once the CLI's flags are gone: "(--device 0)" and "--ctx-force".
QString withoutFlags(QString text) {
  static const QRegularExpression inParentheses(QStringLiteral(R"(\s*\([^()]*--[a-z][^()]*\))"));
  static const QRegularExpression bare(QStringLiteral(R"(\s*--[a-z][a-z-]*(\s+[a-z0-9_]+\b)?)"));
  return text.remove(inParentheses).remove(bare).trimmed();
}

}  // namespace

QString EngineWording::text(const std::string& engineText) {
  const QString english = QString::fromStdString(engineText);
  for (const Phrase& phrase : phrases())
    if (const Match m = phrase.pattern.match(english); m.hasMatch()) return phrase.say(m);
  return withoutFlags(english);
}

bool EngineWording::softwareVulkan(const std::string& backend) {
  return backend.starts_with("vulkan (") && backend.find(kiln::kSoftwareVulkan) != std::string::npos;
}

QString EngineWording::device(const std::string& backend) {
  const QString name = QString::fromStdString(backend);
  static const QRegularExpression cpu(QStringLiteral(R"(^cpu \((\d+) threads?(?:, (.*))?\)$)"));
  static const QRegularExpression vulkan(QStringLiteral(R"(^vulkan \((.*)\)$)"));
  if (const Match m = cpu.match(name); m.hasMatch()) {
    const int count = m.captured(1).toInt();  // no %n: plural forms would need every .ts to carry them
    const QString threads = count == 1 ? tr("CPU, one thread") : tr("CPU, %1 threads").arg(QLocale().toString(count));
    static const QRegularExpression npu(QStringLiteral("^attention on (\\w+)$"));
    const QString routed = m.captured(2);
    if (routed.isEmpty()) return threads;
    if (const Match a = npu.match(routed); a.hasMatch()) return tr("%1, attention on the %2").arg(threads, a.captured(1).toUpper());
    return threads + QStringLiteral(", ") + routed;
  }
  if (const Match m = vulkan.match(name); m.hasMatch()) {
    QString gpu = m.captured(1);
    if (softwareVulkan(backend)) {
      gpu.chop(int(std::string_view(kiln::kSoftwareVulkan).size()) + 2);  // ", software Vulkan (...)"
      return tr("software Vulkan (slow, for testing): %1").arg(gpu);
    }
    return tr("GPU (Vulkan): %1").arg(gpu);
  }
  return withoutFlags(name);
}

QString EngineWording::refusal(const std::string& type, const std::string& refusal) {
  if (type == "cpu" && refusal.starts_with("a CPU implementation of Vulkan"))
    return tr("software Vulkan (slow, for testing): Kiln’s own CPU path is faster, so Automatic never uses it; "
              "it runs only when Vulkan is chosen in Settings");
  return text(refusal);
}

}  // namespace kiln::gui
