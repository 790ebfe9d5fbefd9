// The real download code (libcurl) against a hub stand-in on 127.0.0.1: listing with sizes and
// pagination, LFS redirects, resume after an interrupted transfer, checksum verification, gated
// repositories, cancel, and `kiln pull` end to end. No traffic leaves the loopback interface.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <random>

#include "download/file_trust.h"
#include "download/http_client.h"
#include "download/hub.h"
#include "download/hub_errors.h"
#include "common/sha256.h"
#include "download_test_support.h"
#include "gguf_fixtures.h"
#include "kiln/types.h"

using namespace kiln;
using namespace kiln::test;
namespace fs = std::filesystem;

class DownloadTest : public QObject {
  Q_OBJECT
  std::string model_;     // 1 MiB "weights"
  std::string big_;       // 2 MiB, for cancel
  QTemporaryDir home_;    // HOME, so no real token file is ever read

 private slots:
  void initTestCase() {
    qputenv("HOME", home_.path().toUtf8());  // and so no real Hugging Face cache either
    for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HOME", "XDG_CACHE_HOME",
                             "HF_ENDPOINT", "KILN_HF_ENDPOINT", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"})
      qunsetenv(name);
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
    HubStandIn hub;
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
    HubStandIn hub;
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
    HubStandIn hub;
    hub.repos["kiln/tiny"] = {{"model.gguf", model_}};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    const HubFile f = listed(hub, "kiln/tiny", "model.gguf");
    hub.cut_next_transfers = 1;
    HubOptions once = options_for(hub);
    once.max_attempts = 1;  // no retry: the part stays for the next run
    const std::string err = error_of([&] { download_file(once, "kiln/tiny", f, dest); });
    QVERIFY2(err.find("interrupted") != std::string::npos && err.find("run again to resume") != std::string::npos,
             err.c_str());
    const uint64_t kept = fs::file_size(dest + "/model.gguf.part");
    QVERIFY2(kept > 0 && kept < model_.size(), std::to_string(kept).c_str());
    QVERIFY(!fs::exists(dest + "/model.gguf"));

    QCOMPARE(download_file(options_for(hub), "kiln/tiny", f, dest), DownloadResult::Resumed);
    QCOMPARE(hub.range_log.back(), "bytes=" + std::to_string(kept) + "-");  // only the rest was asked for
    QCOMPARE(read_file_bytes(dest + "/model.gguf"), model_);
    QVERIFY(!fs::exists(dest + "/model.gguf.part"));
  }

  void wrongChecksumIsRefusedAndRemoved() {
    HubStandIn hub;
    StandInFile bad{"model.gguf", model_};
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

    StandInFile longer{"extra.bin", "0123456789", false};
    longer.listed_size = 4;
    hub.repos["kiln/tiny"] = {longer};
    QVERIFY(error_of([&] { download_file(options_for(hub), "kiln/tiny", listed(hub, "kiln/tiny", "extra.bin"), dest); })
                .find("more than the listed") != std::string::npos);
  }

  // The five refusals, told apart as the real hub's answers allow.
  void refusalsSayWhatHappened() {
    HubStandIn hub;
    hub.repos[hub.gated_repo] = {{"model.gguf", model_}};
    hub.repos["kiln/public"] = {{"model.gguf", model_}};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();

    // A typo without a token: the hub answers 401, which is no reason to talk about licences.
    const std::string typo = error_of([&] { list_repo_files(options_for(hub), "kiln/pubic"); });
    QVERIFY2(typo.find("not found, or it is private or gated: check the name, or sign in") != std::string::npos, typo.c_str());
    QCOMPARE(kind_of([&] { list_repo_files(options_for(hub), "kiln/pubic"); }), HubErrorKind::NotFoundOrNoAccess);
    // An unknown token is refused even on a public repository.
    const std::string stale = error_of([&] { list_repo_files(options_for(hub, "hf_stale"), "kiln/public"); });
    QVERIFY2(stale.find("your token (from --token) is invalid or expired") != std::string::npos, stale.c_str());
    QVERIFY(stale.find("hf_stale") == std::string::npos);  // never the token itself
    QCOMPARE(kind_of([&] { list_repo_files(options_for(hub, "hf_stale"), "kiln/public"); }), HubErrorKind::InvalidToken);

    // Gated: the listing is public, the file is not.
    const HubFile f = listed(hub, hub.gated_repo, "model.gguf");
    auto fetch = [&](const std::string& token) { download_file(options_for(hub, token), hub.gated_repo, f, dest); };
    const std::string anonymous = error_of([&] { fetch(""); });
    QVERIFY2(anonymous.find("accept the licence at https://huggingface.co/google/gemma-gated") != std::string::npos &&
                 anonymous.find("sign in") != std::string::npos, anonymous.c_str());
    QCOMPARE(kind_of([&] { fetch(""); }), HubErrorKind::LicenceNotAccepted);
    QVERIFY(!fs::exists(dest + "/model.gguf.part"));  // a refusal leaves no empty part behind
    const std::string not_accepted = error_of([&] { fetch("hf_no_licence"); });
    QVERIFY2(not_accepted.find("accept the licence at https://huggingface.co/google/gemma-gated") != std::string::npos,
             not_accepted.c_str());
    QCOMPARE(kind_of([&] { fetch("hf_no_licence"); }), HubErrorKind::LicenceNotAccepted);
    const std::string pending = error_of([&] { fetch("hf_pending"); });
    QVERIFY2(pending.find("your access request is pending") != std::string::npos, pending.c_str());
    QCOMPARE(kind_of([&] { fetch("hf_pending"); }), HubErrorKind::AccessPending);
    const std::string fine = error_of([&] { fetch("hf_fine_grained"); });
    QVERIFY2(fine.find("this fine-grained token (from --token) lacks access to gated repositories") != std::string::npos,
             fine.c_str());
    QCOMPARE(kind_of([&] { fetch("hf_fine_grained"); }), HubErrorKind::FineGrainedToken);
    QCOMPARE(hub.range_log.size(), size_t(0));  // no refusal was retried into a transfer

    QCOMPARE(download_file(options_for(hub, hub.good_token), hub.gated_repo, f, dest), DownloadResult::Downloaded);
    QCOMPARE(hub.auths.back(), "Bearer " + hub.good_token);
    // The redirect went to the CDN on another port, and the token stayed behind.
    QVERIFY(!hub.cdn_auths.empty());
    for (const std::string& a : hub.cdn_auths) QVERIFY2(a.empty(), a.c_str());
  }

  void tokensFromWhereUsersKeepThem() {
    QTemporaryDir dir;
    const QString d = dir.path();
    auto source = [](const std::string& given = "") { return find_hub_token(given, "the app's settings").source; };
    QCOMPARE(find_hub_token().token, std::string());  // nothing anywhere: anonymous
    QDir().mkpath(home_.path() + "/.cache/huggingface");
    write_file(home_.path().toStdString() + "/.cache/huggingface/token", "hf_home_file\n");
    QCOMPARE(find_hub_token().token, std::string("hf_home_file"));  // trimmed
    QCOMPARE(source(), home_.path().toStdString() + "/.cache/huggingface/token");
    QDir().mkpath(d + "/hfhome");
    write_file(d.toStdString() + "/hfhome/token", "  hf_hf_home  ");
    qputenv("HF_HOME", (d + "/hfhome").toUtf8());
    QCOMPARE(find_hub_token().token, std::string("hf_hf_home"));
    write_file(d.toStdString() + "/custom", "hf_token_path\r\n");
    qputenv("HF_TOKEN_PATH", (d + "/custom").toUtf8());
    QCOMPARE(find_hub_token().token, std::string("hf_token_path"));
    qputenv("HUGGING_FACE_HUB_TOKEN", " hf_legacy\n");
    QCOMPARE(find_hub_token().token, std::string("hf_legacy"));
    QCOMPARE(source(), std::string("HUGGING_FACE_HUB_TOKEN"));
    qputenv("HF_TOKEN", "hf_env\n");
    QCOMPARE(find_hub_token().token, std::string("hf_env"));
    QCOMPARE(source(), std::string("HF_TOKEN"));
    QCOMPARE(find_hub_token(" hf_given ", "the app's settings").token, std::string("hf_given"));
    QCOMPARE(source(" hf_given "), std::string("the app's settings"));
    QCOMPARE(source("  \n"), std::string("HF_TOKEN"));  // a blank setting leaves the rest in charge
    const HubOptions o = hub_options_from_env("", "--token");
    QCOMPARE(o.token, std::string("hf_env"));
    QCOMPARE(o.token_source, std::string("HF_TOKEN"));
    for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HOME"}) qunsetenv(name);
    fs::remove(home_.path().toStdString() + "/.cache/huggingface/token");

    qputenv("HF_ENDPOINT", "http://127.0.0.1:8/");  // a mirror, as set for every HF tool
    QCOMPARE(hub_options_from_env().endpoint, std::string("http://127.0.0.1:8"));
    qputenv("KILN_HF_ENDPOINT", "http://127.0.0.1:9");  // Kiln's own wins
    QCOMPARE(hub_options_from_env().endpoint, std::string("http://127.0.0.1:9"));
    qunsetenv("HF_ENDPOINT");
    qunsetenv("KILN_HF_ENDPOINT");
  }

  void busyAndFailingServersAreRetried() {
    HubStandIn hub;
    hub.repos["kiln/tiny"] = {{"model.gguf", model_}};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    hub.fail_next_listings = {{503}, {429, "", "\"api\";r=0;t=0"}};
    const HubFile f = listed(hub, "kiln/tiny", "model.gguf");  // third time lucky

    hub.fail_next = {{429, "1"}, {503}, {408}};
    std::vector<DownloadProgress> seen;
    const auto start = std::chrono::steady_clock::now();
    QCOMPARE(download_file(options_for(hub), "kiln/tiny", f, dest, [&](const DownloadProgress& p) { seen.push_back(p); }),
             DownloadResult::Downloaded);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY2(took >= 0.95 && took < 10, std::to_string(took).c_str());  // Retry-After: 1 was honoured
    QCOMPARE(read_file_bytes(dest + "/model.gguf"), model_);
    std::vector<int> waits;  // the attempts announced while waiting
    for (const DownloadProgress& p : seen)
      if (p.retrying) waits.push_back(p.attempt);
    QCOMPARE(waits, (std::vector<int>{2, 3, 4}));
    QVERIFY(seen.front().retry_reason.empty());
    QCOMPARE(seen.back().attempt, 4);
    QCOMPARE(seen.back().max_attempts, 5);

    // Five failures: the pull gives up and says how often it tried; 404 is not retried at all.
    hub.fail_next = {{503}, {503}, {503}, {503}, {503}, {503}};
    fs::remove(dest + "/model.gguf");
    const std::string err = error_of([&] { download_file(options_for(hub), "kiln/tiny", f, dest); });
    QVERIFY2(err.find("HTTP 503, 5 attempts") != std::string::npos, err.c_str());
    QCOMPARE(hub.fail_next.size(), size_t(1));
    hub.fail_next = {{404}, {404}};
    QVERIFY(!error_of([&] { download_file(options_for(hub), "kiln/tiny", f, dest); }).empty());
    QCOMPARE(hub.fail_next.size(), size_t(1));
    hub.fail_next.clear();
  }

  void retryDelaysFromTheServer() {
    HttpResult r;
    QCOMPARE(server_retry_delay(r), -1.0);  // nothing said: our own backoff
    r.retry_after = "7";
    QCOMPARE(server_retry_delay(r), 7.0);
    r.retry_after = "Wed, 21 Oct 2015 07:28:00 GMT";  // a date in the past: go now
    QCOMPARE(server_retry_delay(r), 0.0);
    r.retry_after.clear();
    r.rate_limit = "\"api\";r=0;t=42";  // the hub's RateLimit: t = seconds until the window resets
    QCOMPARE(server_retry_delay(r), 42.0);
    QVERIFY(retryable_status(429) && retryable_status(408) && retryable_status(503) && !retryable_status(404) &&
            !retryable_status(401));
  }

  void dropMidFileResumesWithinThePull() {
    HubStandIn hub;
    hub.repos["kiln/tiny"] = {{"model.gguf", model_}};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    hub.cut_next_transfers = 2;  // two drops, each after half of what was asked
    QCOMPARE(download_file(options_for(hub), "kiln/tiny", listed(hub, "kiln/tiny", "model.gguf"), dest),
             DownloadResult::Downloaded);
    QCOMPARE(read_file_bytes(dest + "/model.gguf"), model_);
    QCOMPARE(hub.range_log.size(), size_t(3));
    QCOMPARE(hub.range_log[0], std::string());
    for (size_t i = 1; i < 3; ++i)  // each retry asked only for the rest
      QVERIFY2(hub.range_log[i].rfind("bytes=", 0) == 0 && hub.range_log[i] != "bytes=0-", hub.range_log[i].c_str());
  }

  void existingFilesAreVerifiedBeforeTheyAreTrusted() {
    HubStandIn hub;
    hub.repos["kiln/tiny"] = {{"model.gguf", model_}};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString(), path = dest + "/model.gguf";
    const HubFile f = listed(hub, "kiln/tiny", "model.gguf");
    write_file(path, std::string(model_.size(), '\0'));  // the right size, the wrong bytes
    QCOMPARE(download_file(options_for(hub), "kiln/tiny", f, dest), DownloadResult::Downloaded);
    QCOMPARE(read_file_bytes(path), model_);
    QVERIFY(verified_before(path, f.sha256));
    QVERIFY(fs::exists(verified_marker_path(path)));

    // The second pull trusts the remembered hash (same size and mtime) without reading the file:
    // changed bytes with the mtime put back still pass, which shows it was not re-hashed...
    const auto mtime = fs::last_write_time(path);
    std::string changed = model_;
    changed[5] ^= 1;
    write_file(path, changed);
    fs::last_write_time(path, mtime);
    QCOMPARE(download_file(options_for(hub), "kiln/tiny", f, dest), DownloadResult::AlreadyPresent);
    QCOMPARE(hub.range_log.size(), size_t(1));
    // ...and once the mtime moves, the hash is checked again and the damage replaced.
    fs::last_write_time(path, mtime + std::chrono::seconds(5));
    QCOMPARE(download_file(options_for(hub), "kiln/tiny", f, dest), DownloadResult::Downloaded);
    QCOMPARE(read_file_bytes(path), model_);
    QCOMPARE(download_file(options_for(hub), "kiln/tiny", f, dest), DownloadResult::AlreadyPresent);
  }

  void hugeListingIsRefusedBeforeAnyByte() {
    HubStandIn hub;
    StandInFile huge{"model.gguf", model_};
    huge.listed_size = int64_t(1e15);
    hub.repos["kiln/huge"] = {huge};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    const HubFile f = listed(hub, "kiln/huge", "model.gguf");
    const std::string err = error_of([&] { check_free_space({f}, dest); });
    QVERIFY2(err.find("not enough free space in " + dest + ": the download needs 1.0 PB") != std::string::npos, err.c_str());
    QCOMPARE(kind_of([&] { download_file(options_for(hub), "kiln/huge", f, dest); }), HubErrorKind::NotEnoughSpace);
    QVERIFY(hub.range_log.empty());
    QVERIFY(!fs::exists(dest + "/model.gguf.part"));
    // A folder not made yet is measured on its nearest parent; a part already there counts as had.
    const HubFile small{"a.gguf", 1000, ""};
    QCOMPARE(check_free_space({small}, dest + "/not/yet/there"), uint64_t(1000));
    write_file(dest + "/a.gguf.part", std::string(400, 'x'));
    QCOMPARE(check_free_space({small}, dest), uint64_t(600));
  }

  void refusedRedirectLeavesNoEmptyPart() {
    HubStandIn hub;
    StandInFile odd{"model.gguf", model_};
    odd.redirect = "ftp://127.0.0.1:1/model.gguf";  // curl follows http(s) only
    hub.repos["kiln/odd"] = {odd};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    QVERIFY(!error_of([&] { download_file(options_for(hub), "kiln/odd", listed(hub, "kiln/odd", "model.gguf"), dest); }).empty());
    QVERIFY(!fs::exists(dest + "/model.gguf.part"));
    QVERIFY(!fs::exists(dest + "/model.gguf"));
  }

  void cancelKeepsThePartThenResumes() {
    HubStandIn hub;
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
    o.backoff_base_s = 0.01;  // refused connections are retried: quickly here
    const std::string err = error_of([&] { list_repo_files(o, "kiln/tiny"); });
    QVERIFY2(err.find("cannot reach http://127.0.0.1:1") != std::string::npos, err.c_str());
  }

  void unsafePathsInAListingAreRefused() {
    HubStandIn hub;
    hub.repos["kiln/evil"] = {{"../../outside.txt", "x", false}};
    QVERIFY(error_of([&] { list_repo_files(options_for(hub), "kiln/evil"); }).find("unsafe") != std::string::npos);
  }

  void kilnPullEndToEnd() {
    const QString kiln = QString(KILN_BINARY_DIR) + "/core/cli/kiln";
    if (!QFile::exists(kiln)) QSKIP("the kiln CLI is not built in this tree");
    HubStandIn hub;
    hub.repos["kiln/tiny-GGUF"] = {{"tiny-Q8_0.gguf", model_}, {"tiny-Q4_0.gguf", big_}, {"README.md", "hi", false}};
    QTemporaryDir home;
    const std::string token_file = home.path().toStdString() + "/hf-token";
    write_file(token_file, hub.good_token + "\n");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_DATA_HOME", home.path());
    env.insert("KILN_HF_ENDPOINT", QString::fromStdString(hub.base()));
    env.remove("HF_TOKEN");
    env.insert("HOME", home.path());
    env.insert("HF_TOKEN_PATH", QString::fromStdString(token_file));
    auto run = [&](const QStringList& args, QByteArray& out, QByteArray& err) {
      QProcess p;
      p.setProcessEnvironment(env);
      p.start(kiln, QStringList(args) << "--retry-wait" << "0.01");
      p.waitForFinished(60000);
      out = p.readAllStandardOutput();
      err = p.readAllStandardError();
      return p.exitCode();
    };
    QByteArray out, err;
    QCOMPARE(run({"pull", "kiln/tiny-GGUF", "--list"}, out, err), 0);
    QVERIFY2(out.contains("tiny-Q8_0.gguf") && out.contains("1.0 MB"), out.constData());
    // A typo, with the token file's token: the hub's 404 said as such, naming where the token came from.
    QCOMPARE(run({"pull", "kiln/tiny-GUFF"}, out, err), 1);
    QVERIFY2(err.contains(("kiln/tiny-GUFF was not found, or it is private or gated for your token's account (from " +
                           token_file + "): check the name").c_str()), err.constData());
    QCOMPARE(run({"pull", "kiln/tiny-GGUF", "--token", "hf_stale"}, out, err), 1);  // --token wins over the file
    QVERIFY2(err.contains("token: from --token") && err.contains("your token (from --token) is invalid or expired") &&
                 !err.contains("hf_stale"), err.constData());
    QCOMPARE(run({"pull", "kiln/tiny-GGUF"}, out, err), 1);  // two GGUF files: the user must pick
    QVERIFY2(err.contains("name one") && err.contains("tiny-Q4_0.gguf"), err.constData());
    hub.fail_next = {{503}};
    QCOMPARE(run({"pull", "kiln/tiny-GGUF:q8_0"}, out, err), 0);
    // Which token, never the token; and the retry explained on a line of its own.
    QVERIFY2(err.contains(("token: from " + token_file).c_str()) && !err.contains(hub.good_token.c_str()), err.constData());
    QVERIFY2(err.contains("tiny-Q8_0.gguf: HTTP 503; retrying in 1 s (attempt 2 of 5)"), err.constData());
    QCOMPARE(hub.auths.back(), "Bearer " + hub.good_token);
    const QString expected = home.path() + "/kiln/models/kiln/tiny-GGUF/tiny-Q8_0.gguf";
    QCOMPARE(QString::fromUtf8(out).trimmed(), expected);
    QCOMPARE(read_file_bytes(expected.toStdString()), model_);
    QVERIFY2(err.contains(("revision: main = commit " + hub.head("kiln/tiny-GGUF")).c_str()), err.constData());

    // --hf-cache: into the shared layout; then a plain pull finds it there and fetches nothing.
    env.insert("HF_HUB_CACHE", home.path() + "/hf");
    QCOMPARE(run({"pull", "kiln/tiny-GGUF:q4_0", "--hf-cache"}, out, err), 0);
    const QString snapshot = home.path() + "/hf/models--kiln--tiny-GGUF/snapshots/" +
                             QString::fromStdString(hub.head("kiln/tiny-GGUF"));
    QCOMPARE(QString::fromUtf8(out).trimmed(), snapshot + "/tiny-Q4_0.gguf");
    QCOMPARE(read_file_bytes((snapshot + "/tiny-Q4_0.gguf").toStdString()), big_);
    const size_t fetched = hub.ranges().size();
    QCOMPARE(run({"pull", "kiln/tiny-GGUF:q4_0"}, out, err), 0);
    QVERIFY2(err.contains("tiny-Q4_0.gguf  2.1 MB  (found in the Hugging Face cache, verified, linked)"), err.constData());
    QCOMPARE(hub.ranges().size(), fetched);
    QCOMPARE(read_file_bytes(home.path().toStdString() + "/kiln/models/kiln/tiny-GGUF/tiny-Q4_0.gguf"), big_);
  }
};

QTEST_GUILESS_MAIN(DownloadTest)
#include "test_download.moc"
