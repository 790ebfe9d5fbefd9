// kiln: run Gemma 3 models from the command line.
#include <cstdio>
#include <iostream>

#include "cli/common.h"
#include "common/printable.h"

int main(int argc, char** argv) {
  CLI::App app{"Kiln: Gemma 3 on your own machine"};
  app.set_version_flag("--version", "kiln " + kiln::version());
  app.require_subcommand(1);
  kiln::cli::add_run_command(app);
  kiln::cli::add_chat_command(app);
  kiln::cli::add_info_command(app);
  kiln::cli::add_logits_command(app);
  kiln::cli::add_tokenize_command(app);
  kiln::cli::add_bench_command(app);
  add_perplexity_command(app);
  add_quantize_command(app);
#ifdef KILN_HAVE_SERVER
  add_serve_command(app);
#endif
#ifdef KILN_HAVE_DOWNLOAD
  add_pull_command(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const kiln::Error& e) {
    std::fflush(stdout);
    std::cerr << "kiln: error: " << kiln::printable(e.what()) << "\n";  // names may come from model files
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "kiln: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "kiln: error: " << kiln::printable(e.what()) << "\n";
    return 1;
  }
  return 0;
}
