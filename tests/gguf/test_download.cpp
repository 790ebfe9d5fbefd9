// The real download code (libcurl) against a hub stand-in on 127.0.0.1: listing with sizes and
// pagination, LFS redirects, resume after an interrupted transfer, checksum verification, gated
// repositories, cancel, and `kiln pull` end to end. No traffic leaves the loopback interface.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <random>

#include "download/hub.h"
#include "download/sha256.h"
#include "fake_hub.h"
#include "gguf_fixtures.h"
#include "kiln/types.h"

using namespace kiln;
using namespace kiln::test;
namespace fs = std::filesystem;

namespace {

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = char(gen() & 0xff);
  return s;
}

HubOptions options_for(const FakeHub& hub, const std::string& token = "") {
  HubOptions o;
  o.endpoint = hub.base();
  o.token = token;
  return o;
}

HubFile listed(const FakeHub& hub, const std::string& repo, const std::string& path, const std::string& token = "") {
  for (const HubFile& f : list_repo_files(options_for(hub, token), repo))
    if (f.path == path) return f;
  qFatal("%s not listed", path.c_str());
  return {};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

class DownloadTest : public QObject {
  Q_OBJECT
  std::string model_;     // 1 MiB "weights"
  std::string big_;       // 2 MiB, for cancel

 private slots:
  void initTestCase() {
    model_ = random_bytes(1 << 20, 1);
    big_ = random_bytes(2 << 20, 2);
  }

  void sha256KnownAnswers() {
    // FIPS 180-2 examples.
    auto hex = [](const std::string& s) {
      Sha256 h;
      h.update(s.data(), s.size());
      return h.hex_digest();
    };
    QCOMPARE(hex(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    QCOMPARE(hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    QCOMPARE(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
             std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    Sha256 million;  // one million 'a', fed in uneven pieces
    const std::string chunk(777, 'a');
    size_t left = 1000000;
    while (left > 0) {
      const size_t n = std::min(left, chunk.size());
      million.update(chunk.data(), n);
      left -= n;
    }
    QCOMPARE(million.hex_digest(), std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
  }

  void referencesAndDestinations() {
    HubReference r = parse_hub_reference("ggml-org/gemma-3-1b-it-GGUF:gemma-3-1b-it-Q4_K_M.gguf");
    QCOMPARE(r.repo, std::string("ggml-org/gemma-3-1b-it-GGUF"));
    QCOMPARE(r.file, std::string("gemma-3-1b-it-Q4_K_M.gguf"));
    QCOMPARE(parse_hub_reference("https://huggingface.co/google/gemma-3-1b-it").repo, std::string("google/gemma-3-1b-it"));
    for (const char* bad : {"gemma", "a/b/c", "../x", "a/..", "a/b:../../etc/passwd", "a/b:/abs", "o w/n"})
      QVERIFY2(!error_of([&] { parse_hub_reference(bad); }).empty(), bad);

    QTemporaryDir dir;
    qputenv("XDG_DATA_HOME", dir.path().toUtf8());
    QCOMPARE(local_repo_dir("google/gemma-3-1b-it"), dir.path().toStdString() + "/kiln/models/google/gemma-3-1b-it");
    qputenv("KILN_HF_ENDPOINT", "http://127.0.0.1:9/");
    qputenv("HF_TOKEN", "hf_env");
    const HubOptions env = hub_options_from_env();
    QCOMPARE(env.endpoint, std::string("http://127.0.0.1:9"));
    QCOMPARE(env.token, std::string("hf_env"));
    qunsetenv("KILN_HF_ENDPOINT");
    qunsetenv("HF_TOKEN");
    QCOMPARE(hub_options_from_env().endpoint, std::string("https://huggingface.co"));
  }

  void choosingFiles() {
    const std::vector<HubFile> folder = {{".gitattributes", 10, ""},   {"README.md", 10, ""},
                                         {"config.json", 10, ""},      {"model.safetensors", 99, "ab"},
                                         {"original/x.pth", 5, "cd"},  {"tokenizer.model", 4, "ef"},
                                         {"tokenizer_config.json", 3, ""}};
    std::vector<std::string> names;
    for (const HubFile& f : files_to_pull(folder, "o/r")) names.push_back(f.path);
    QCOMPARE(names, (std::vector<std::string>{"config.json", "model.safetensors", "tokenizer.model", "tokenizer_config.json"}));

    const std::vector<HubFile> one = {{"README.md", 1, ""}, {"m-Q4_K_M.gguf", 9, "aa"}, {"mmproj-m-f16.gguf", 5, "bb"}};
    QCOMPARE(files_to_pull(one, "o/r").at(0).path, std::string("m-Q4_K_M.gguf"));

    const std::vector<HubFile> many = {{"m-Q4_K_M.gguf", 9, "aa"}, {"m-Q8_0.gguf", 9, "bb"}, {"m-Q4_0.gguf", 9, "cc"}};
    const std::string err = error_of([&] { files_to_pull(many, "o/r"); });
    QVERIFY2(err.find("3 GGUF files") != std::string::npos && err.find("m-Q8_0.gguf") != std::string::npos, err.c_str());
    QCOMPARE(select_file(many, "o/r", "q8_0").path, std::string("m-Q8_0.gguf"));  // a quant tag picks the file
    QCOMPARE(select_file(many, "o/r", "m-Q4_0.gguf").path, std::string("m-Q4_0.gguf"));
    QVERIFY(error_of([&] { select_file(many, "o/r", "Q4"); }).find("matches 2 files") != std::string::npos);
    QVERIFY(error_of([&] { select_file(many, "o/r", "Q6_K"); }).find("has no file") != std::string::npos);
  }

  void listingWithSizesAcrossPages() {
    FakeHub hub;
    hub.repos["kiln/tiny"] = {{"config.json", "{}", false}, {"model.safetensors", model_}, {"sub/dir/notes.txt", "hello", false}};
    const auto files = list_repo_files(options_for(hub), "kiln/tiny");
    QCOMPARE(files.size(), size_t(3));  // the third came from the second page
    QCOMPARE(files[0].path, std::string("config.json"));
    QCOMPARE(files[0].size, uint64_t(2));
    QVERIFY(files[0].sha256.empty());
    QCOMPARE(files[1].path, std::string("model.safetensors"));
    QCOMPARE(files[1].size, uint64_t(model_.size()));
    QCOMPARE(files[1].sha256.size(), size_t(64));
    QCOMPARE(files[2].path, std::string("sub/dir/notes.txt"));
    const std::string missing = error_of([&] { list_repo_files(options_for(hub), "kiln/absent"); });
    QVERIFY2(missing.find("not found") != std::string::npos, missing.c_str());
  }

  void downloadVerifyAndSkipWhenPresent() {
    FakeHub hub;
    hub.repos["kiln/tiny"] = {{"model.safetensors", model_}, {"sub/dir/notes.txt", "hello", false}};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    std::vector<DownloadProgress> seen;
    const HubFile f = listed(hub, "kiln/tiny", "model.safetensors");
    QCOMPARE(download_file(options_for(hub), "kiln/tiny", f, dest, [&](const DownloadProgress& p) { seen.push_back(p); }),
             DownloadResult::Downloaded);
    QCOMPARE(read_file_bytes(dest + "/model.safetensors"), model_);
    QVERIFY(!fs::exists(dest + "/model.safetensors.part"));
    QVERIFY(seen.size() >= 2);
    QCOMPARE(seen.back().done, uint64_t(model_.size()));
    QCOMPARE(seen.back().total, uint64_t(model_.size()));
    for (size_t i = 1; i < seen.size(); ++i) QVERIFY(seen[i].done >= seen[i - 1].done);

    QCOMPARE(download_file(options_for(hub), "kiln/tiny", f, dest), DownloadResult::AlreadyPresent);
    // A small git file in a sub-folder (no LFS hash: the size is what is checked).
    QCOMPARE(download_file(options_for(hub), "kiln/tiny", listed(hub, "kiln/tiny", "sub/dir/notes.txt"), dest),
             DownloadResult::Downloaded);
    QCOMPARE(read_file_bytes(dest + "/sub/dir/notes.txt"), std::string("hello"));
  }

  void interruptedTransferResumes() {
    FakeHub hub;
    hub.repos["kiln/tiny"] = {{"model.gguf", model_}};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    const HubFile f = listed(hub, "kiln/tiny", "model.gguf");
    hub.cut_next_transfers = 1;
    const std::string err = error_of([&] { download_file(options_for(hub), "kiln/tiny", f, dest); });
    QVERIFY2(err.find("interrupted") != std::string::npos && err.find("run again to resume") != std::string::npos,
             err.c_str());
    const uint64_t kept = fs::file_size(dest + "/model.gguf.part");
    QVERIFY2(kept > 0 && kept < model_.size(), std::to_string(kept).c_str());
    QVERIFY(!fs::exists(dest + "/model.gguf"));

    QCOMPARE(download_file(options_for(hub), "kiln/tiny", f, dest), DownloadResult::Resumed);
    QCOMPARE(hub.ranges.back(), "bytes=" + std::to_string(kept) + "-");  // only the rest was asked for
    QCOMPARE(read_file_bytes(dest + "/model.gguf"), model_);
    QVERIFY(!fs::exists(dest + "/model.gguf.part"));
  }

  void wrongChecksumIsRefusedAndRemoved() {
    FakeHub hub;
    FakeFile bad{"model.gguf", model_};
    bad.listed_sha256 = std::string(64, 'a');
    hub.repos["kiln/tiny"] = {bad};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    const std::string err = error_of([&] { download_file(options_for(hub), "kiln/tiny", listed(hub, "kiln/tiny", "model.gguf"), dest); });
    QVERIFY2(err.find("SHA-256 mismatch") != std::string::npos, err.c_str());
    QVERIFY(!fs::exists(dest + "/model.gguf"));
    QVERIFY(!fs::exists(dest + "/model.gguf.part"));

    // A part whose bytes differ from the file (say, another version) fails the hash after resuming.
    hub.repos["kiln/tiny"] = {{"model.gguf", model_}};
    std::string stale = model_.substr(0, 1000);
    stale[10] ^= 1;
    std::ofstream(dest + "/model.gguf.part", std::ios::binary) << stale;
    QVERIFY(error_of([&] { download_file(options_for(hub), "kiln/tiny", listed(hub, "kiln/tiny", "model.gguf"), dest); })
                .find("SHA-256 mismatch") != std::string::npos);
    QCOMPARE(download_file(options_for(hub), "kiln/tiny", listed(hub, "kiln/tiny", "model.gguf"), dest),
             DownloadResult::Downloaded);  // the damaged part was removed, so it starts over

    FakeFile longer{"extra.bin", "0123456789", false};
    longer.listed_size = 4;
    hub.repos["kiln/tiny"] = {longer};
    QVERIFY(error_of([&] { download_file(options_for(hub), "kiln/tiny", listed(hub, "kiln/tiny", "extra.bin"), dest); })
                .find("more than the listed") != std::string::npos);
  }

  void gatedRepositoryNeedsTheLicence() {
    FakeHub hub;
    hub.repos[hub.gated_repo] = {{"model.gguf", model_}};
    const std::string anonymous = error_of([&] { list_repo_files(options_for(hub), hub.gated_repo); });
    QVERIFY2(anonymous.find("https://huggingface.co/google/gemma-gated") != std::string::npos &&
                 anonymous.find("licence") != std::string::npos && anonymous.find("HF_TOKEN") != std::string::npos,
             anonymous.c_str());
    const std::string wrong = error_of([&] { list_repo_files(options_for(hub, "hf_wrong"), hub.gated_repo); });
    QVERIFY2(wrong.find("no access") != std::string::npos && wrong.find("https://huggingface.co/google/gemma-gated") != std::string::npos,
             wrong.c_str());

    QTemporaryDir dir;
    const HubFile f = listed(hub, hub.gated_repo, "model.gguf", hub.good_token);
    // Listing with the token, then the file itself without it: the download is refused the same way.
    QVERIFY(error_of([&] { download_file(options_for(hub), hub.gated_repo, f, dir.path().toStdString()); })
                .find("licence") != std::string::npos);
    QCOMPARE(download_file(options_for(hub, hub.good_token), hub.gated_repo, f, dir.path().toStdString()),
             DownloadResult::Downloaded);
    QCOMPARE(hub.auths.back(), "Bearer " + hub.good_token);
  }

  void cancelKeepsThePartThenResumes() {
    FakeHub hub;
    hub.repos["kiln/big"] = {{"model.gguf", big_}};
    hub.chunk_delay_ms = 5;
    hub.stop_after_bytes = 256 * 1024;  // the server presses "cancel" for the client midway
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    const HubFile f = listed(hub, "kiln/big", "model.gguf");
    const std::string err = error_of([&] { download_file(options_for(hub), "kiln/big", f, dest, {}, hub.cancel.get_token()); });
    QVERIFY2(err.find("cancelled") != std::string::npos, err.c_str());
    const uint64_t kept = fs::file_size(dest + "/model.gguf.part");
    QVERIFY2(kept >= 128 * 1024 && kept < big_.size(), std::to_string(kept).c_str());  // cut within a chunk or two

    hub.stop_after_bytes = 0;
    hub.chunk_delay_ms = 0;
    QCOMPARE(download_file(options_for(hub), "kiln/big", f, dest), DownloadResult::Resumed);
    QCOMPARE(read_file_bytes(dest + "/model.gguf"), big_);
  }

  void unreachableServerIsAClearError() {
    HubOptions o;
    o.endpoint = "http://127.0.0.1:1";  // nothing listens on port 1
    const std::string err = error_of([&] { list_repo_files(o, "kiln/tiny"); });
    QVERIFY2(err.find("cannot reach http://127.0.0.1:1") != std::string::npos, err.c_str());
  }

  void unsafePathsInAListingAreRefused() {
    FakeHub hub;
    hub.repos["kiln/evil"] = {{"../../outside.txt", "x", false}};
    QVERIFY(error_of([&] { list_repo_files(options_for(hub), "kiln/evil"); }).find("unsafe") != std::string::npos);
  }

  void kilnPullEndToEnd() {
    const QString kiln = QString(KILN_BINARY_DIR) + "/core/cli/kiln";
    if (!QFile::exists(kiln)) QSKIP("the kiln CLI is not built in this tree");
    FakeHub hub;
    hub.repos["kiln/tiny-GGUF"] = {{"tiny-Q8_0.gguf", model_}, {"tiny-Q4_0.gguf", big_}, {"README.md", "hi", false}};
    QTemporaryDir home;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_DATA_HOME", home.path());
    env.insert("KILN_HF_ENDPOINT", QString::fromStdString(hub.base()));
    env.remove("HF_TOKEN");
    auto run = [&](const QStringList& args, QByteArray& out, QByteArray& err) {
      QProcess p;
      p.setProcessEnvironment(env);
      p.start(kiln, args);
      p.waitForFinished(60000);
      out = p.readAllStandardOutput();
      err = p.readAllStandardError();
      return p.exitCode();
    };
    QByteArray out, err;
    QCOMPARE(run({"pull", "kiln/tiny-GGUF", "--list"}, out, err), 0);
    QVERIFY2(out.contains("tiny-Q8_0.gguf") && out.contains("1.0 MB"), out.constData());
    QCOMPARE(run({"pull", "kiln/tiny-GGUF"}, out, err), 1);  // two GGUF files: the user must pick
    QVERIFY2(err.contains("name one") && err.contains("tiny-Q4_0.gguf"), err.constData());
    QCOMPARE(run({"pull", "kiln/tiny-GGUF:q8_0"}, out, err), 0);
    const QString expected = home.path() + "/kiln/models/kiln/tiny-GGUF/tiny-Q8_0.gguf";
    QCOMPARE(QString::fromUtf8(out).trimmed(), expected);
    QCOMPARE(read_file_bytes(expected.toStdString()), model_);
  }
};

QTEST_GUILESS_MAIN(DownloadTest)
#include "test_download.moc"
