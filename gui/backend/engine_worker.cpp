#include "engine_worker.h"

#include <chrono>
#include <exception>
#include <string>

#include "engine_wording.h"
#include "kiln/hardware.h"
#include "utf8.h"

namespace kiln::gui {

namespace {

using Clock = std::chrono::steady_clock;

double millisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Anything thrown by the engine becomes one line for the user, in the app's words (no CLI flags);
// non-kiln exceptions are bugs, but the window must survive them too.
QString describe(const std::exception& e) { return EngineWording::text(e.what()); }

constexpr double kSampleIntervalMs = 100;  // live plot resolution: enough for a smooth line

}  // namespace

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) { registerEngineMetaTypes(); }

EngineWorker::~EngineWorker() = default;

std::unique_ptr<kiln::Engine> EngineWorker::open(const LoadRequest& request, bool quiet) {
  kiln::LoadOptions options;
  options.path = request.path.toStdString();
  options.precision = request.precision;
  options.backend = request.backend;
  options.attention = request.attention;
  options.context_length = request.contextLength;
  // The setting holds for every model: a model trained for less takes its own length.
  options.context_beyond_training = kiln::LoadOptions::BeyondTraining::Clamp;
  options.threads = request.threads;
  options.cancel = request.cancel;
  if (!quiet)
    options.on_progress = [this](const kiln::LoadProgress& progress) {
      emit loadProgress(QString::fromStdString(progress.stage), progress.fraction);
    };
  auto engine = kiln::Engine::load(options);
  engine->set_profiling(profiling_);
  return engine;
}

void EngineWorker::load(const LoadRequest& request) {
  const auto cancelled = [&] { return request.cancel.stop_requested(); };
  // The model in use stays until the new one passed every check that needs no weights read: a
  // truncated file or a config that does not fit its tensors never costs the working model.
  if (engine_) {
    try {
      if (!cancelled()) kiln::Engine::check(request.path.toStdString());
    } catch (const std::exception& e) {
      emit loadFailed(describe(e), true);
      return;
    }
    if (cancelled()) {
      emit loadFailed(tr("Loading was cancelled."), true);
      return;
    }
  }
  std::optional<LoadRequest> previous = std::move(loadedRequest_);
  loadedRequest_.reset();
  engine_.reset();  // free the old model's memory before the new one is read
  try {
    engine_ = open(request, false);
    loadedRequest_ = request;
    emit loaded(engine_->info());
    return;
  } catch (const std::exception& e) {
    engine_.reset();
    if (cancelled()) {  // the user let go of both: nothing is loaded again
      emit loadFailed(tr("Loading was cancelled."), false);
      return;
    }
    const QString message = describe(e);
    // A failure the checks could not see (memory, the context asked for): the previous model
    // comes back, loaded as it was.
    if (previous) {
      try {
        previous->cancel = request.cancel;  // closing the window still stops it
        engine_ = open(*previous, true);
        loadedRequest_ = std::move(previous);
      } catch (const std::exception&) {
        engine_.reset();
      }
    }
    emit loadFailed(message, engine_ != nullptr);
  }
}

void EngineWorker::unload() {
  engine_.reset();
  loadedRequest_.reset();
}

void EngineWorker::inspect(const QString& path) {
  try {
    emit inspected(path, kiln::Engine::inspect(path.toStdString()));
  } catch (const std::exception& e) {
    emit inspectFailed(path, describe(e));
  }
}

void EngineWorker::chat(const ChatRequest& request) {
  if (!engine_) {
    emit failed(request.id, tr("No model is loaded."));
    return;
  }
  const auto start = Clock::now();
  std::string pending;  // bytes of a UTF-8 character not yet complete
  int tokens = 0, tokensAtLastSample = 0;
  double lastSampleMs = 0;
  const std::stop_token cancel = request.options.cancel;

  auto onText = [&](std::string_view piece) {
    pending.append(piece);
    const std::size_t complete = completeUtf8Prefix(pending);
    if (complete > 0) {
      emit textArrived(request.id, QString::fromUtf8(pending.data(), static_cast<qsizetype>(complete)));
      pending.erase(0, complete);
    }
    ++tokens;
    const double now = millisSince(start);
    if (now - lastSampleMs >= kSampleIntervalMs) {
      const double rate = (tokens - tokensAtLastSample) * 1000.0 / (now - lastSampleMs);
      emit liveSample({request.id, now, rate, static_cast<double>(kiln::resident_memory_bytes())});
      lastSampleMs = now;
      tokensAtLastSample = tokens;
    }
    return !cancel.stop_requested();
  };

  try {
    kiln::GenerationStats stats = engine_->chat(request.messages, request.options, onText);
    if (!pending.empty()) emit textArrived(request.id, QString::fromUtf8(pending.data(), static_cast<qsizetype>(pending.size())));
    emit liveSample({request.id, millisSince(start), stats.decode_tokens_per_s,
                     static_cast<double>(kiln::resident_memory_bytes())});
    emit finished(request.id, stats);
  } catch (const std::exception& e) {
    emit failed(request.id, describe(e));
  }
}

void EngineWorker::probeHardware() {
  try {
    emit hardwareProbed(kiln::probe_hardware());
  } catch (const std::exception& e) {
    kiln::HardwareInfo info;
    info.vulkan_status = e.what();
    emit hardwareProbed(info);
  }
}

void EngineWorker::runTask(const std::function<void(kiln::Engine&)>& task) {
  if (!engine_) return;
  try {
    task(*engine_);
  } catch (const std::exception& e) {
    qWarning("kiln-desktop: API server task failed: %s", e.what());  // it told its client already
  }
}

void EngineWorker::setProfiling(bool enabled) {
  profiling_ = enabled;
  if (engine_) engine_->set_profiling(enabled);
}

}  // namespace kiln::gui
