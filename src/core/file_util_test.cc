// core/file_util.h: what the tools write never goes through a symbolic link
// someone else planted, and a folder's files are never read through one.
#include "core/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "opscope/npy.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

class FileUtilTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "file_util_test_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static std::string Slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void Put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  fs::path dir_;
};

TEST_F(FileUtilTest, ALinkAtTheOutputPathIsReplacedNotFollowed) {
  const fs::path victim = dir_ / "authorized_keys", link = dir_ / "report.html";
  Put(victim, "ssh-ed25519 AAAA user@host\n");
  ASSERT_EQ(::chmod(victim.c_str(), 0600), 0);
  fs::create_symlink(victim, link);
  ASSERT_TRUE(WriteFileAtomic(link.string(), "<html>page</html>").ok());
  EXPECT_EQ(Slurp(victim), "ssh-ed25519 AAAA user@host\n") << "the link's target was written";
  EXPECT_FALSE(fs::is_symlink(link)) << "the link was kept";
  EXPECT_EQ(Slurp(link), "<html>page</html>");
  // The new file has the default mode, not the target's.
  struct stat st;
  ASSERT_EQ(::stat(link.c_str(), &st), 0);
  const mode_t umask_now = ::umask(0);
  ::umask(umask_now);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~umask_now);
}

TEST_F(FileUtilTest, ALinkToAMissingFileCreatesNothingThere) {
  const fs::path target = dir_ / "elsewhere" / "new_file", link = dir_ / "trace.json";
  fs::create_directories(target.parent_path());
  fs::create_symlink(target, link);
  ASSERT_TRUE(WriteFileAtomic(link.string(), "{}").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(target)));
  EXPECT_EQ(Slurp(link), "{}");
}

TEST_F(FileUtilTest, DeviceLinksUnderDevAreWrittenThrough) {
  // /dev/stdout is a link to /proc/self/fd/1: a user who names it means it.
  // /dev/null is a device itself; the link form is /dev/fd/N of an open /dev/null.
  const int fd = ::open("/dev/null", O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string path = "/dev/fd/" + std::to_string(fd);
  EXPECT_TRUE(WriteFileAtomic(path, "x").ok());
  struct stat st;
  EXPECT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null was replaced";
  ::close(fd);
  // /dev/fd/N of a regular file (stdout redirected to one): that file gets
  // the bytes, and nothing is put in /dev.
  const fs::path redirected = dir_ / "redirected.json";
  Put(redirected, "old");
  const int file_fd = ::open(redirected.c_str(), O_WRONLY);
  ASSERT_GE(file_fd, 0);
  ASSERT_TRUE(WriteFileAtomic("/dev/fd/" + std::to_string(file_fd), "new").ok());
  ::close(file_fd);
  EXPECT_EQ(Slurp(redirected), "new");
  for (const auto& e : fs::directory_iterator("/dev")) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path() << " left in /dev";
  }
  // The same kind of link anywhere else is replaced, never written through.
  const fs::path link = dir_ / "out.json";
  fs::create_symlink("/dev/null", link);
  ASSERT_TRUE(WriteFileAtomic(link.string(), "data").ok());
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(Slurp(link), "data");
}

TEST_F(FileUtilTest, MakeOutputDirRefusesALinkAndNamesIt) {
  const fs::path elsewhere = dir_ / "ssh";
  fs::create_directories(elsewhere);
  fs::create_symlink(elsewhere, dir_ / "diagnose");
  const Status st = MakeOutputDir((dir_ / "diagnose").string(), "--output-dir");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--output-dir"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("symbolic link"), std::string::npos) << st.message();
  // A relative path is checked at every component: `repro -> elsewhere`, then repro/op.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  fs::create_symlink(elsewhere, "repro");
  const Status inner = MakeOutputDir("repro/my_pool", "--repro-dir");
  fs::current_path(cwd);
  EXPECT_FALSE(inner.ok());
  EXPECT_FALSE(fs::exists(elsewhere / "my_pool")) << "a folder was made through the link";
  // A plain folder, existing or new, is fine.
  EXPECT_TRUE(MakeOutputDir((dir_ / "new" / "deeper").string(), "--output-dir").ok());
  EXPECT_TRUE(fs::is_directory(dir_ / "new" / "deeper"));
  EXPECT_TRUE(MakeOutputDir((dir_ / "new").string(), "--output-dir").ok());
}

TEST_F(FileUtilTest, ReadFolderFileRefusesALink) {
  Put(dir_ / "secret", "not for the page");
  fs::create_symlink(dir_ / "secret", dir_ / "trace.json");
  StatusOr<std::string> got = ReadFolderFile(dir_.string(), "trace.json");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("symbolic link"), std::string::npos) << got.status().message();
  Put(dir_ / "summary.json", "{}");
  got = ReadFolderFile(dir_.string(), "summary.json");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "{}");
}

}  // namespace
}  // namespace opscope
