#include "providers/generations.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace plimsoll {
namespace {

struct Config {
  std::string key;
  std::string Key() const { return key; }
};

std::shared_ptr<const Config> Fresh(std::string key) {
  return std::make_shared<const Config>(Config{std::move(key)});
}

TEST(GenerationsTest, NothingServesBeforeASmokeTestPassed) {
  Generations<Config> generations;
  EXPECT_FALSE(generations.Serving());
  auto candidate = generations.Candidate(Fresh("image A"));
  EXPECT_EQ(candidate.number, 1u);
  EXPECT_FALSE(generations.Serving());  // a candidate is not served
  EXPECT_TRUE(generations.Promote(candidate));
  ASSERT_TRUE(generations.Serving());
  EXPECT_EQ(generations.Serving().number, 1u);
}

TEST(GenerationsTest, AnUnchangedHostTestsTheServingGenerationAgain) {
  Generations<Config> generations;
  auto first = generations.Candidate(Fresh("image A"));
  generations.Promote(first);
  auto again = generations.Candidate(Fresh("image A"));
  EXPECT_EQ(again.number, 1u);
  EXPECT_EQ(again.config, first.config);  // the fresh copy is dropped
  EXPECT_FALSE(generations.Promote(again));
}

TEST(GenerationsTest, AChangeIsANewGenerationThatServesOnlyOncePromoted) {
  Generations<Config> generations;
  generations.Promote(generations.Candidate(Fresh("image A")));
  auto changed = generations.Candidate(Fresh("image B"));
  EXPECT_EQ(changed.number, 2u);
  EXPECT_EQ(generations.Serving().config->key, "image A");  // until its smoke test passed
  // Two smoke tests of the same change share its number.
  EXPECT_EQ(generations.Candidate(Fresh("image B")).number, 2u);
  EXPECT_TRUE(generations.Promote(changed));
  EXPECT_EQ(generations.Serving().config->key, "image B");
}

TEST(GenerationsTest, AnOlderCandidateNeverReplacesANewerServingOne) {
  Generations<Config> generations;
  auto b = generations.Candidate(Fresh("image B"));  // 1
  auto c = generations.Candidate(Fresh("image C"));  // 2 (the host changed again)
  EXPECT_TRUE(generations.Promote(c));
  EXPECT_FALSE(generations.Promote(b));  // its check finished last, but it is older
  EXPECT_EQ(generations.Serving().config->key, "image C");
}

TEST(GenerationsTest, ServingEnvironmentRefusals) {
  Status none = CheckServingEnvironment(false, "linux", "", "");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(NotDispatchedReason(none.error()), NotDispatched::kEnvironment);
  EXPECT_TRUE(CheckServingEnvironment(true, "linux", "sha256:a", "").ok());
  EXPECT_TRUE(CheckServingEnvironment(true, "linux", "sha256:a", "sha256:a").ok());
  Status other = CheckServingEnvironment(true, "linux", "sha256:a", "sha256:b");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(NotDispatchedReason(other.error()), NotDispatched::kEnvironment);
}

}  // namespace
}  // namespace plimsoll
