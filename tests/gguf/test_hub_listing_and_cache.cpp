// The hub as it really behaves, beyond the basics of test_download.cpp: listings pinned to one
// commit and followed across pages only on the same host, small files checked by their git
// SHA-1, huge files fetched in ranges, and the Hugging Face cache read in place and written in its
// layout. The real download code (libcurl) against the stand-in on 127.0.0.1.
#include <QTemporaryDir>
#include <QtTest>
#include <sys/stat.h>

#include <filesystem>

#include "download/file_trust.h"
#include "download/hf_cache.h"
#include "common/sha1.h"
#include "download_test_support.h"
#include "gguf_fixtures.h"

using namespace kiln;
using namespace kiln::test;
namespace fs = std::filesystem;

class HubListingAndCacheTest : public QObject {
  Q_OBJECT
  std::string model_;   // 1 MiB "weights"
  std::string big_;     // 2 MiB
  QTemporaryDir home_;  // HOME, so no real token file or cache is ever read

 private slots:
  void initTestCase() {
    qputenv("HOME", home_.path().toUtf8());
    for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HOME", "XDG_CACHE_HOME",
                             "HF_ENDPOINT", "KILN_HF_ENDPOINT", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"})
      qunsetenv(name);
    model_ = random_bytes(1 << 20, 1);
    big_ = random_bytes(2 << 20, 2);
  }

  void sha1KnownAnswers() {
    auto hex = [](const std::string& s) {
      Sha1 h;
      h.update(s.data(), s.size());
      return h.hex_digest();
    };
    QCOMPARE(hex("abc"), std::string("a9993e364706816aba3e25717850c26c9cd0d89d"));  // FIPS 180-2
    QCOMPARE(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
             std::string("84983e441c3bd26ebaae4aa1f95129e5e54670f1"));
    // git's own ids (`git hash-object`): the empty blob and "hello\n".
    QCOMPARE(git_blob_oid(""), std::string("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"));
    QCOMPARE(git_blob_oid("hello\n"), std::string("ce013625030ba8dba906f756967f9e9ca394464a"));
  }

  // Small git files carry their blob SHA-1 in the listing: damage is caught like an LFS file's.
  void smallFilesAreCheckedByTheirGitSha1() {
    HubStandIn hub;
    StandInFile config{"config.json", "{\"model_type\": \"gemma3\"}\n", false};
    hub.repos["kiln/small"] = {config};
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString(), path = dest + "/config.json";
    const HubFile f = listed(hub, "kiln/small", "config.json");
    QCOMPARE(f.git_oid, git_blob_oid(config.content));
    QVERIFY(f.sha256.empty());
    write_file(path, std::string(config.content.size(), ' '));  // planted: right size, wrong bytes
    QCOMPARE(download_file(options_for(hub), "kiln/small", f, dest), DownloadResult::Downloaded);
    QCOMPARE(read_file_bytes(path), config.content);
    QCOMPARE(download_file(options_for(hub), "kiln/small", f, dest), DownloadResult::AlreadyPresent);

    config.listed_oid = git_blob_oid("something else");  // the listing and the bytes disagree
    hub.repos["kiln/small"] = {config};
    fs::remove(path);
    const std::string err = error_of([&] { download_file(options_for(hub), "kiln/small", listed(hub, "kiln/small", "config.json"), dest); });
    QVERIFY2(err.find("git SHA-1 mismatch") != std::string::npos, err.c_str());
    QVERIFY(!fs::exists(path) && !fs::exists(path + ".part"));
  }

  // The listing asks which commit main is at, lists that commit and downloads from it: a push in
  // between does not mix two versions of the model.
  void listingAndDownloadArePinnedToOneCommit() {
    HubStandIn hub;
    hub.repos["kiln/moving"] = {{"model.gguf", model_}};
    const RepoListing listing = list_repo(options_for(hub), "kiln/moving");
    QCOMPARE(listing.commit, hub.head("kiln/moving"));
    QCOMPARE(listing.commit.size(), size_t(40));
    hub.push("kiln/moving", {{"model.gguf", big_}});  // main moves on
    QVERIFY(hub.head("kiln/moving") != listing.commit);
    QTemporaryDir dir;
    HubOptions pinned = options_for(hub);
    pinned.revision = listing.commit;
    QCOMPARE(download_file(pinned, "kiln/moving", listing.files.at(0), dir.path().toStdString()), DownloadResult::Downloaded);
    QCOMPARE(read_file_bytes(dir.path().toStdString() + "/model.gguf"), model_);  // the listed version
    std::vector<std::string> asked;
    {
      std::lock_guard<std::mutex> lock(hub.log_mutex);
      asked = hub.paths;
    }
    QCOMPARE(asked.at(0), std::string("/api/models/kiln/moving/revision/main"));
    QCOMPARE(asked.at(1), "/api/models/kiln/moving/tree/" + listing.commit);
    QCOMPARE(asked.at(2), "/kiln/moving/resolve/" + listing.commit + "/model.gguf");
    QCOMPARE(list_repo(options_for(hub), "kiln/moving").commit, hub.head("kiln/moving"));  // a new listing moves on
    HubOptions old_commit = options_for(hub);  // an older commit can still be listed by its id
    old_commit.revision = listing.commit;
    QCOMPARE(list_repo(old_commit, "kiln/moving").files.at(0).sha256, listing.files.at(0).sha256);
    HubOptions typo = options_for(hub);
    typo.revision = "mian";
    const std::string err = error_of([&] { list_repo(typo, "kiln/moving"); });
    QVERIFY2(err.find("kiln/moving has no such revision (Invalid rev id: mian)") != std::string::npos, err.c_str());
  }

  void nextPageLinksRelativeFollowedOtherHostRefused() {
    HubStandIn hub;
    hub.page_size = 1;
    hub.repos["kiln/paged"] = {{"a.txt", "a", false}, {"b.txt", "b", false}, {"c.txt", "c", false}};
    hub.next_link = NextLink::Relative;
    QCOMPARE(list_repo_files(options_for(hub), "kiln/paged").size(), size_t(3));
    hub.next_link = NextLink::OtherHost;  // the token must not go there, and half a listing is no listing
    const std::string err = error_of([&] { list_repo_files(options_for(hub), "kiln/paged"); });
    QVERIFY2(err.find("continues on another host (" + hub.cdn_base() + ")") != std::string::npos, err.c_str());
    for (const std::string& a : hub.cdn_auths) QVERIFY(a.empty());
  }

  // The CDN refuses one GET above ~50 GB; the threshold is an option, so 300 KB stands in here.
  void hugeFilesComeInRangedChunks() {
    HubStandIn hub;
    hub.repos["kiln/huge"] = {{"model.gguf", model_}};
    hub.max_request_bytes = 300000;
    QTemporaryDir dir;
    const std::string dest = dir.path().toStdString();
    const HubFile f = listed(hub, "kiln/huge", "model.gguf");
    HubOptions whole = options_for(hub);  // one unranged GET: refused, as the CDN does
    QVERIFY(!error_of([&] { download_file(whole, "kiln/huge", f, dest); }).empty());
    QVERIFY(!fs::exists(dest + "/model.gguf.part"));
    hub.range_log.clear();

    HubOptions ranged = options_for(hub);
    ranged.max_request_bytes = 300000;
    hub.cut_next_transfers = 1;  // and a drop inside the first chunk resumes within it
    QCOMPARE(download_file(ranged, "kiln/huge", f, dest), DownloadResult::Downloaded);
    QCOMPARE(read_file_bytes(dest + "/model.gguf"), model_);
    // Every request is a closed range of at most 300 KB; the one after the drop starts where the
    // part ended (inside the first chunk), and the last ends at the file's last byte.
    std::vector<std::pair<uint64_t, uint64_t>> asked;
    std::string all;
    for (const std::string& r : hub.ranges()) {
      all += r + " ";
      const size_t dash = r.find('-');
      QVERIFY2(r.rfind("bytes=", 0) == 0 && dash != std::string::npos && dash + 1 < r.size(), all.c_str());
      asked.push_back({std::stoull(r.substr(6, dash - 6)), std::stoull(r.substr(dash + 1))});
    }
    QVERIFY2(asked.size() == 4, all.c_str());
    QCOMPARE(asked.front(), (std::pair<uint64_t, uint64_t>{0, 299999}));
    QVERIFY2(asked[1].first > 0 && asked[1].first < 300000, all.c_str());
    QCOMPARE(asked.back().second, uint64_t(model_.size() - 1));
    for (size_t i = 0; i < asked.size(); ++i) {
      QVERIFY2(asked[i].second - asked[i].first + 1 <= 300000, all.c_str());
      if (i > 1) QCOMPARE(asked[i].first, asked[i - 1].second + 1);
    }
  }

  // A model that Python tools or llama.cpp already fetched is used in place, never downloaded again.
  void theHuggingFaceCacheIsUsedInPlace() {
    HubStandIn hub;
    hub.repos["kiln/cached"] = {{"model.gguf", model_}, {"config.json", "{}", false}};
    QTemporaryDir cache, dir;
    qputenv("HF_HUB_CACHE", cache.path().toUtf8());
    const RepoListing listing = list_repo(options_for(hub), "kiln/cached");
    const HubFile gguf = listing.files.at(1), config = listing.files.at(0);
    // The cache as huggingface_hub leaves it: blobs named by their hash, snapshots linking to them.
    const std::string repo_dir = hf_repo_cache_folder(cache.path().toStdString(), "kiln/cached");
    QCOMPARE(repo_dir, cache.path().toStdString() + "/models--kiln--cached");
    fs::create_directories(repo_dir + "/blobs");
    fs::create_directories(repo_dir + "/snapshots/" + listing.commit);
    write_file(repo_dir + "/blobs/" + gguf.sha256, model_);
    fs::create_symlink("../../blobs/" + gguf.sha256, repo_dir + "/snapshots/" + listing.commit + "/model.gguf");
    write_file(repo_dir + "/blobs/" + config.git_oid, "{}");  // small files go by their git id

    HubOptions pinned = options_for(hub);
    pinned.revision = listing.commit;
    const std::string dest = dir.path().toStdString();
    std::vector<DownloadProgress> seen;
    QCOMPARE(download_file(pinned, "kiln/cached", gguf, dest, [&](const DownloadProgress& p) { seen.push_back(p); }),
             DownloadResult::FromHfCache);
    // Hashing the cached copy is reported as such, up to the whole file; nothing else happened.
    QVERIFY(!seen.empty());
    for (const DownloadProgress& p : seen) QVERIFY(p.verifying && p.total == gguf.size);
    QCOMPARE(seen.back().done, gguf.size);
    QCOMPARE(download_file(pinned, "kiln/cached", config, dest), DownloadResult::FromHfCache);
    QVERIFY(hub.ranges().empty());  // not one byte fetched
    QVERIFY(fs::equivalent(dest + "/model.gguf", repo_dir + "/blobs/" + gguf.sha256));  // linked, not copied
    QCOMPARE(read_file_bytes(dest + "/config.json"), std::string("{}"));
    QCOMPARE(download_file(pinned, "kiln/cached", gguf, dest), DownloadResult::AlreadyPresent);

    // A damaged blob of the right size is not trusted: the file is downloaded.
    fs::remove(dest + "/model.gguf");
    fs::remove(repo_dir + "/blobs/" + gguf.sha256);
    write_file(repo_dir + "/blobs/" + gguf.sha256, std::string(model_.size(), '\0'));
    QCOMPARE(download_file(pinned, "kiln/cached", gguf, dest), DownloadResult::Downloaded);
    QCOMPARE(read_file_bytes(dest + "/model.gguf"), model_);
    QCOMPARE(hub.ranges().size(), size_t(1));
    qunsetenv("HF_HUB_CACHE");

    // $HF_HOME/hub is searched too, and ~/.cache/huggingface/hub (where `hf download` puts files
    // by default) last: a blob in each is found.
    QTemporaryDir hf_home;
    qputenv("HF_HOME", hf_home.path().toUtf8());
    const std::vector<std::string> dirs = hf_hub_cache_dirs();
    QCOMPARE(dirs.front(), hf_home.path().toStdString() + "/hub");
    QCOMPARE(dirs.back(), home_.path().toStdString() + "/.cache/huggingface/hub");
    for (const std::string& root : {dirs.front(), dirs.back()}) {
      const std::string blobs = hf_repo_cache_folder(root, "kiln/cached") + "/blobs";
      fs::create_directories(blobs);
      write_file(blobs + "/" + gguf.sha256, model_);
      fs::remove(dest + "/model.gguf");
      QCOMPARE(download_file(pinned, "kiln/cached", gguf, dest), DownloadResult::FromHfCache);
      QVERIFY(fs::equivalent(dest + "/model.gguf", blobs + "/" + gguf.sha256));
      fs::remove(blobs + "/" + gguf.sha256);
    }
    QCOMPARE(hub.ranges().size(), size_t(1));  // still only the one download of the damaged case
    qunsetenv("HF_HOME");
  }

  // A cache on another file system cannot be hard-linked: the file is referred to by a symlink.
  void aCacheOnAnotherFileSystemIsReferredTo() {
    QTemporaryDir cache(QStringLiteral("/dev/shm/kiln-hf-XXXXXX")), dir;
    std::error_code ec;
    if (!cache.isValid() || fs::space(cache.path().toStdString(), ec).capacity == 0)
      QSKIP("no /dev/shm here");
    struct stat a {}, b {};
    if (::stat(cache.path().toUtf8().constData(), &a) != 0 || ::stat(dir.path().toUtf8().constData(), &b) != 0 ||
        a.st_dev == b.st_dev)
      QSKIP("/dev/shm is on the same file system as the temporary folder here");
    HubStandIn hub;
    hub.repos["kiln/far"] = {{"model.gguf", model_}};
    qputenv("HF_HUB_CACHE", cache.path().toUtf8());
    const HubFile f = listed(hub, "kiln/far", "model.gguf");
    const std::string blob = hf_repo_cache_folder(cache.path().toStdString(), "kiln/far") + "/blobs/" + f.sha256;
    fs::create_directories(fs::path(blob).parent_path());
    write_file(blob, model_);
    const std::string dest = dir.path().toStdString();
    QCOMPARE(download_file(options_for(hub), "kiln/far", f, dest), DownloadResult::FromHfCache);
    QVERIFY(fs::is_symlink(dest + "/model.gguf"));
    QCOMPARE(fs::read_symlink(dest + "/model.gguf").string(), blob);
    QCOMPARE(read_file_bytes(dest + "/model.gguf"), model_);
    QCOMPARE(download_file(options_for(hub), "kiln/far", f, dest), DownloadResult::AlreadyPresent);
    QVERIFY(hub.ranges().empty());
    qunsetenv("HF_HUB_CACHE");
  }

  // With the shared layout chosen, downloads land where huggingface_hub would put them.
  void downloadsIntoTheHuggingFaceCacheLayout() {
    HubStandIn hub;
    hub.repos["kiln/shared"] = {{"sub/model.gguf", model_}, {"config.json", "{}", false}};
    QTemporaryDir cache;
    const std::string root = cache.path().toStdString();
    const RepoListing listing = list_repo(options_for(hub), "kiln/shared");
    HubOptions pinned = options_for(hub);
    pinned.revision = listing.commit;
    for (const HubFile& f : listing.files)
      QCOMPARE(download_into_hf_cache(pinned, "kiln/shared", f, root, "main"), DownloadResult::Downloaded);
    const std::string repo_dir = root + "/models--kiln--shared", snapshot = hf_snapshot_dir(root, "kiln/shared", listing.commit);
    QCOMPARE(snapshot, repo_dir + "/snapshots/" + listing.commit);
    const HubFile& gguf = listing.files.at(1);
    QCOMPARE(fs::read_symlink(snapshot + "/sub/model.gguf").string(), "../../../blobs/" + gguf.sha256);
    QCOMPARE(read_file_bytes(snapshot + "/sub/model.gguf"), model_);
    QCOMPARE(read_file_bytes(snapshot + "/config.json"), std::string("{}"));
    QCOMPARE(read_file_bytes(repo_dir + "/refs/main"), listing.commit);
    QVERIFY(!fs::exists(repo_dir + "/blobs/" + gguf.sha256 + ".incomplete"));
    const size_t fetched = hub.ranges().size();
    QCOMPARE(download_into_hf_cache(pinned, "kiln/shared", gguf, root, "main"), DownloadResult::AlreadyPresent);
    QCOMPARE(hub.ranges().size(), fetched);
  }
};

QTEST_GUILESS_MAIN(HubListingAndCacheTest)
#include "test_hub_listing_and_cache.moc"
