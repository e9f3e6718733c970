// Directory and zip stores: keys, listing, zip layouts (stored, deflated, top-level folder,
// zip64, empty), and the errors for paths that are not stores.

#include <algorithm>
#include <fstream>

#include "vczstats/error.hpp"
#include "vczstats/zarr.hpp"
#include "zarr/zarr_test_support.hpp"

namespace {

using namespace vczstats::zarr;
using vcztest::zarr::fixtures;
using vcztest::zarr::read_file;

std::string as_string(const Bytes& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

void write_file(const std::filesystem::path& p, const std::string& content) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

TEST(ZarrStore, BytesOwnOrViewTheirMemory) {
  Bytes empty;
  EXPECT_EQ(empty.size(), 0u);
  std::vector<std::byte> v{std::byte{1}, std::byte{2}};
  Bytes owned(std::move(v));
  Bytes copy = owned;
  EXPECT_EQ(copy.size(), 2u);
  EXPECT_EQ(copy.data(), owned.data());
  auto keep = std::make_shared<std::vector<std::byte>>(5, std::byte{7});
  Bytes view(std::span<const std::byte>(keep->data(), 3), keep);
  keep.reset();
  EXPECT_EQ(view.size(), 3u);
  EXPECT_EQ(view.span()[2], std::byte{7});
}

TEST(ZarrStore, DirectoryStoreKeysAndListing) {
  vcztest::TempDir dir;
  write_file(dir / ".zgroup", R"({"zarr_format": 2})");
  write_file(dir.path() / "a" / ".zarray", "{}");
  write_file(dir.path() / "a" / "0.0", "abc");
  write_file(dir.path() / "a" / "1" / "0", "defg");
  write_file(dir.path() / "ab" / "x", "");
  const auto store = open_store(dir.path());
  EXPECT_EQ(store->path(), dir.path().string());
  ASSERT_TRUE(store->get("a/0.0"));
  EXPECT_EQ(as_string(*store->get("a/0.0")), "abc");
  EXPECT_EQ(as_string(*store->get("a/1/0")), "defg");
  EXPECT_EQ(store->get("ab/x")->size(), 0u);
  EXPECT_FALSE(store->get("a/2.0"));
  EXPECT_FALSE(store->get("a"));  // a folder is not a key
  EXPECT_FALSE(store->get("a/0.0/x"));
  EXPECT_FALSE(store->get("../etc/passwd"));
  EXPECT_TRUE(store->contains("a/1/0"));
  EXPECT_FALSE(store->contains("a/1"));

  const auto all = store->list("");
  std::vector<std::string> keys;
  for (const auto& e : all) keys.push_back(e.key);
  EXPECT_EQ(keys, (std::vector<std::string>{".zgroup", "a/.zarray", "a/0.0", "a/1/0", "ab/x"}));
  EXPECT_EQ(all[3].stored_size, 4u);
  const auto under_a = store->list("a");
  EXPECT_EQ(under_a.size(), 3u);  // not "ab/x"
  EXPECT_EQ(store->list("a/").size(), 3u);
  EXPECT_TRUE(store->list("nope").empty());
  EXPECT_EQ(store->children(""), (std::vector<std::string>{".zgroup", "a", "ab"}));
  EXPECT_EQ(store->children("a"), (std::vector<std::string>{".zarray", "0.0", "1"}));
}

TEST(ZarrStore, ZipStoreMatchesDirectoryStore) {
  const auto dir = open_store(fixtures() / "v2");
  const auto dir_keys = dir->list("");
  for (const std::string name :
       {"v2_stored.zip", "v2_deflated.zip", "v2_folder.zip", "v2_zip64.zip"}) {
    SCOPED_TRACE(name);
    const auto zip = open_store(fixtures() / name);
    const auto keys = zip->list("");
    ASSERT_EQ(keys.size(), dir_keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(keys[i].key, dir_keys[i].key);
      const auto a = zip->get(keys[i].key);
      const auto b = dir->get(keys[i].key);
      ASSERT_TRUE(a && b);
      EXPECT_EQ(as_string(*a), as_string(*b));
    }
    EXPECT_TRUE(zip->contains(".zgroup"));
    EXPECT_FALSE(zip->contains("v2_folder/.zgroup"));
    EXPECT_FALSE(zip->contains("sep_slash"));  // directory entries are not keys
    EXPECT_EQ(zip->children(""), dir->children(""));
    EXPECT_EQ(zip->children("sep_slash/0"), dir->children("sep_slash/0"));
    EXPECT_EQ(zip->list("sep_slash").size(), dir->list("sep_slash").size());
  }
}

TEST(ZarrStore, StoredZipEntriesAreViewsOfTheMapping) {
  const auto zip = open_store(fixtures() / "v2_stored.zip");
  const auto a = zip->get("positions/0");
  const auto b = zip->get("positions/0");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->data(), b->data());  // same mapped memory, no copy
  // The view outlives the store object.
  std::optional<Bytes> kept;
  {
    const auto other = open_store(fixtures() / "v2_stored.zip");
    kept = other->get("positions/.zarray");
  }
  EXPECT_NE(as_string(*kept).find("\"zarr_format\": 2"), std::string::npos);
}

TEST(ZarrStore, EmptyZipHasNoKeys) {
  const auto zip = open_store(fixtures() / "empty.zip");
  EXPECT_TRUE(zip->list("").empty());
  EXPECT_FALSE(zip->get(".zgroup"));
  EXPECT_THROW(open_group(*zip), vczstats::FormatError);
}

TEST(ZarrStore, ErrorsNameThePath) {
  vcztest::TempDir dir;
  try {
    open_store(dir / "missing.zip");
    FAIL() << "expected IoError";
  } catch (const vczstats::IoError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.zip"), std::string::npos);
  }
  write_file(dir / "notes.txt", "hello");
  try {
    open_store(dir / "notes.txt");
    FAIL() << "expected FormatError";
  } catch (const vczstats::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("notes.txt"), std::string::npos);
  }
  // A zip whose central directory is cut off.
  const std::string zip = read_file(fixtures() / "v2_stored.zip");
  write_file(dir / "cut.zip", zip.substr(0, zip.size() / 2));
  try {
    open_store(dir / "cut.zip");
    FAIL() << "expected FormatError";
  } catch (const vczstats::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.zip"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("corrupt zip"), std::string::npos);
  }
  // Central directory intact, but the entry data overwritten: the deflate stream is damaged.
  std::string damaged = read_file(fixtures() / "v2_deflated.zip");
  const auto at = damaged.find("positions/0");
  ASSERT_NE(at, std::string::npos);
  for (std::size_t i = at + 11; i < at + 200; ++i) damaged[i] = '\x55';
  write_file(dir / "damaged.zip", damaged);
  const auto store = open_store(dir / "damaged.zip");
  EXPECT_THROW(store->get("positions/0"), vczstats::FormatError);
}

}  // namespace
