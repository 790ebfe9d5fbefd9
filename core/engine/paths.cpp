// Where Kiln finds its bundled model and keeps the user's models.
#include <cstdlib>
#include <filesystem>

#include "kiln/engine.h"

namespace kiln {
namespace fs = std::filesystem;

std::string version() { return KILN_VERSION; }

std::string default_model_path() {
  // KILN_DEFAULT_MODEL overrides; then the installed copy; then a developer's source tree.
  if (const char* env = std::getenv("KILN_DEFAULT_MODEL"); env && *env) return env;
  const fs::path candidates[] = {fs::path(KILN_DATA_DIR) / "models" / "kiln-demo",
                                 fs::path("/usr/share/kiln/models/kiln-demo"),
                                 fs::path(KILN_SOURCE_DIR) / "resources" / "models" / "kiln-demo"};
  std::error_code ec;
  for (const fs::path& p : candidates)
    if (fs::exists(p / "config.json", ec)) return p.string();
  return "";
}

std::string user_models_dir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return (fs::path(xdg) / "kiln" / "models").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".local" / "share" / "kiln" / "models").string();
}

}  // namespace kiln
