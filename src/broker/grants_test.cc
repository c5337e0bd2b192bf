#include "broker/grants.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace plimsoll::broker {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::string_view kFullYaml = R"(# A complete grants file.
version: 1
profiles:
  inventory:
    base_url: https://inventory.example.com
    allow:
      - GET /items
      - GET /items/*
      - POST /items/*/reservations
    scopes: [inventory.read, inventory.reserve]
    allowed_callers: [ci-bot, alice]
    token:
      source: jwt
      secret_env: INVENTORY_JWT_SECRET
      audience: inventory-api
      ttl_seconds: 120
    max_calls: 500
    route_max_calls:
      POST /items/*/reservations: 10
    allow_in_sessions: true
    batch_of:
      GET /items/*: GET /items
    health_check: GET /health
  weather:
    base_url: http://127.0.0.1:8080
    allow: ["GET /forecast/*"]
    allowed_callers: ["*"]
    token: {source: static, env: WEATHER_TOKEN}
)";

// The same file as JSON.
constexpr std::string_view kFullJson = R"({
  "version": 1,
  "profiles": {
    "inventory": {
      "base_url": "https://inventory.example.com",
      "allow": ["GET /items", "GET /items/*", "POST /items/*/reservations"],
      "scopes": ["inventory.read", "inventory.reserve"],
      "allowed_callers": ["ci-bot", "alice"],
      "token": {"source": "jwt", "secret_env": "INVENTORY_JWT_SECRET",
                "audience": "inventory-api", "ttl_seconds": 120},
      "max_calls": 500,
      "route_max_calls": {"POST /items/*/reservations": 10},
      "allow_in_sessions": true,
      "batch_of": {"GET /items/*": "GET /items"},
      "health_check": "GET /health"
    },
    "weather": {
      "base_url": "http://127.0.0.1:8080",
      "allow": ["GET /forecast/*"],
      "allowed_callers": ["*"],
      "token": {"source": "static", "env": "WEATHER_TOKEN"}
    }
  }
})";

std::vector<std::string> Texts(const std::vector<RouteTemplate>& routes) {
  std::vector<std::string> texts;
  for (const auto& route : routes) texts.push_back(route.text());
  return texts;
}

void ExpectFullExample(const Grants& grants) {
  const Profile* inventory = grants.ForCaller("inventory", "alice");
  ASSERT_NE(inventory, nullptr);
  EXPECT_EQ(inventory->name, "inventory");
  EXPECT_EQ(inventory->base_url.ToString(), "https://inventory.example.com");
  EXPECT_THAT(Texts(inventory->allow),
              ElementsAre("GET /items", "GET /items/*", "POST /items/*/reservations"));
  EXPECT_THAT(inventory->scopes, ElementsAre("inventory.read", "inventory.reserve"));
  EXPECT_THAT(inventory->allowed_callers, ElementsAre("ci-bot", "alice"));
  EXPECT_FALSE(inventory->any_caller);
  ASSERT_TRUE(std::holds_alternative<JwtTokenSource>(inventory->token));
  EXPECT_EQ(std::get<JwtTokenSource>(inventory->token),
            (JwtTokenSource{"INVENTORY_JWT_SECRET", "inventory-api", 120}));
  EXPECT_EQ(inventory->max_calls, 500);
  EXPECT_EQ(inventory->route_max_calls.at("POST /items/*/reservations"), 10);
  EXPECT_TRUE(inventory->allow_in_sessions);
  EXPECT_EQ(inventory->batch_of.at("GET /items/*"), "GET /items");
  ASSERT_TRUE(inventory->health_check.has_value());
  EXPECT_EQ(inventory->health_check->text(), "GET /health");

  const Profile* weather = grants.ForCaller("weather", "anyone");
  ASSERT_NE(weather, nullptr);
  EXPECT_TRUE(weather->base_url.loopback);
  EXPECT_TRUE(weather->any_caller);
  EXPECT_EQ(std::get<StaticTokenSource>(weather->token).env, "WEATHER_TOKEN");
  EXPECT_EQ(weather->max_calls, kDefaultMaxCalls);
  EXPECT_FALSE(weather->allow_in_sessions);
  EXPECT_THAT(weather->scopes, IsEmpty());
  EXPECT_THAT(weather->route_max_calls, IsEmpty());
  EXPECT_THAT(weather->batch_of, IsEmpty());
  EXPECT_FALSE(weather->health_check.has_value());

  EXPECT_THAT(grants.Warnings(), ElementsAre(HasSubstr("\"weather\" lists allowed_callers \"*\"")));
}

TEST(GrantsTest, ReadsEveryFieldFromYaml) {
  auto grants = ParseGrants(kFullYaml, "grants.yaml");
  ASSERT_TRUE(grants.ok()) << grants.error().ToString();
  ExpectFullExample(*grants);
}

TEST(GrantsTest, ReadsTheSameFileAsJson) {
  auto grants = ParseGrants(kFullJson, "grants.json");
  ASSERT_TRUE(grants.ok()) << grants.error().ToString();
  ExpectFullExample(*grants);
  auto yaml = ParseGrants(kFullYaml, "grants.yaml");
  ASSERT_TRUE(yaml.ok());
  EXPECT_EQ(grants->profiles().size(), yaml->profiles().size());
}

TEST(GrantsTest, UnknownAndForbiddenProfilesLookTheSame) {
  auto grants = ParseGrants(kFullYaml, "grants.yaml");
  ASSERT_TRUE(grants.ok());
  EXPECT_NE(grants->ForCaller("inventory", "ci-bot"), nullptr);
  EXPECT_EQ(grants->ForCaller("inventory", "mallory"), nullptr);  // forbidden
  EXPECT_EQ(grants->ForCaller("payroll", "alice"), nullptr);      // unknown
  EXPECT_EQ(grants->ForCaller("Inventory", "alice"), nullptr);
  EXPECT_EQ(grants->ForCaller("inventory", "Alice"), nullptr);
  EXPECT_EQ(grants->ForCaller("", ""), nullptr);
  EXPECT_THAT(grants->ProfilesFor("alice"), ElementsAre("inventory", "weather"));
  EXPECT_THAT(grants->ProfilesFor("mallory"), ElementsAre("weather"));
}

TEST(GrantsTest, AnEmptyGrantsValueHasNoProfiles) {
  Grants none;
  EXPECT_EQ(none.ForCaller("inventory", "alice"), nullptr);
  EXPECT_THAT(none.ProfilesFor("alice"), IsEmpty());
  auto empty = ParseGrants("version: 1\nprofiles: {}\n", "g.yaml");
  ASSERT_TRUE(empty.ok()) << empty.error().ToString();
  EXPECT_THAT(empty->Warnings(), ElementsAre(HasSubstr("no profiles")));
}

// One file, many problems: every one is listed with its line, sorted.
constexpr std::string_view kBrokenYaml = R"(version: 1
profiles:
  inventory:
    base_url: http://inventory.example.com/v1
    allow:
      - GET /items
      - GET /items/../admin
      - FETCH /items
      - GET /items
    allowed_callers: []
    token: {source: jwt, secret_env: 1SECRET, ttl_seconds: 7200}
    max_calls: "256"
    route_max_calls:
      DELETE /items: 3
    allow_in_sessions: yes
    batch_of:
      GET /items/*: GET /items
    health_check: POST /health
    bse_url: https://x.example.com
  Bad_Name:
    allow: [GET /a]
    allowed_callers: ["*", alice]
    token: {source: static}
    base_url: https://ok.example.com
  ok:
    base_url: https://ok.example.com
    allow: [GET /a]
    allowed_callers: [alice]
    token: {source: static, env: OK_TOKEN, audience: x}
extra: true
)";

TEST(GrantsTest, ListsEveryProblemWithItsLineAndField) {
  auto grants = ParseGrants(kBrokenYaml, "grants.yaml");
  ASSERT_FALSE(grants.ok());
  EXPECT_EQ(grants.error().code(), ErrorCode::kInvalidArgument);
  const std::string& message = grants.error().message();
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= message.size()) {
    std::size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    lines.push_back(message.substr(start, end - start));
    start = end + 1;
  }
  ASSERT_GE(lines.size(), 2u) << message;
  EXPECT_EQ(lines[0],
            "The grants file grants.yaml has " + std::to_string(lines.size() - 1) + " problems:");
  std::vector<std::string> problems(lines.begin() + 1, lines.end());
  EXPECT_THAT(
      problems,
      ElementsAre(
          HasSubstr("grants.yaml:4: inventory.base_url: The base URL has a path"),
          HasSubstr("grants.yaml:7: inventory.allow[1]: The route \"/items/../admin\" has a "
                    "segment made only of dots"),
          HasSubstr("grants.yaml:8: inventory.allow[2]: The method \"FETCH\" is not one of"),
          HasSubstr("grants.yaml:9: inventory.allow[3]: \"GET /items\" is listed twice."),
          HasSubstr("grants.yaml:10: inventory.allowed_callers: must be a non-empty list"),
          HasSubstr("grants.yaml:11: inventory.token.secret_env: \"1SECRET\" is not an "
                    "environment variable name"),
          HasSubstr("grants.yaml:11: inventory.token.audience: is missing"),
          HasSubstr("grants.yaml:11: inventory.token.ttl_seconds: must be a whole number from 1 "
                    "to 3600; 7200 is out of range."),
          HasSubstr("grants.yaml:12: inventory.max_calls: must be a whole number from 1 to "
                    "100000, not a quoted string."),
          HasSubstr("grants.yaml:14: inventory.route_max_calls.DELETE /items: \"DELETE /items\" "
                    "is not one of this profile's allow entries."),
          HasSubstr("grants.yaml:15: inventory.allow_in_sessions: must be true or false"),
          HasSubstr("grants.yaml:17: inventory.batch_of.GET /items/*: \"GET /items/*\" is not "
                    "one of this profile's allow entries."),
          HasSubstr("grants.yaml:18: inventory.health_check: must be a GET or HEAD route"),
          HasSubstr("grants.yaml:19: inventory.bse_url: is not a field of a profile; did you "
                    "mean base_url?"),
          HasSubstr("grants.yaml:20: profiles.Bad_Name: is not a valid profile name"),
          HasSubstr("grants.yaml:22: Bad_Name.allowed_callers: \"*\" (every caller) must be the "
                    "only entry"),
          HasSubstr("grants.yaml:23: Bad_Name.token.env: is missing"),
          HasSubstr("grants.yaml:29: ok.token.audience: is not a field of a static token"),
          HasSubstr("grants.yaml:30: extra: is not a field of a grants file")))
      << message;
}

TEST(GrantsTest, ListsProblemsOfAJsonFileWithTheirLines) {
  constexpr std::string_view kBrokenJson = R"({
  "version": 2,
  "profiles": {
    "api": {
      "base_url": "https://api.example.com?x=1",
      "allow": ["GET /a//b", "GET /a;b"],
      "allowed_callers": ["bob"],
      "token": {"source": "vault", "path": "x"},
      "max_calls": 0
    }
  }
})";
  auto grants = ParseGrants(kBrokenJson, "grants.json");
  ASSERT_FALSE(grants.ok());
  const std::string& message = grants.error().message();
  EXPECT_THAT(message, HasSubstr("The grants file grants.json has 6 problems:\n"));
  EXPECT_THAT(message, HasSubstr("\ngrants.json:2: version: must be 1"));
  EXPECT_THAT(message, HasSubstr("\ngrants.json:5: api.base_url: The base URL has a query"));
  EXPECT_THAT(message, HasSubstr("\ngrants.json:6: api.allow[0]: The route \"/a//b\" has an empty "
                                 "segment"));
  EXPECT_THAT(message, HasSubstr("\ngrants.json:6: api.allow[1]: The route \"/a;b\" contains ';'"));
  EXPECT_THAT(message, HasSubstr("\ngrants.json:8: api.token.source: must be static or jwt."));
  EXPECT_THAT(message, HasSubstr("\ngrants.json:9: api.max_calls: must be a whole number from 1 "
                                 "to 100000; 0 is out of range."));
}

TEST(GrantsTest, RequiredFieldsAreReportedAtTheProfile) {
  auto grants = ParseGrants("version: 1\nprofiles:\n  bare: {}\n", "g.yaml");
  ASSERT_FALSE(grants.ok());
  const std::string& message = grants.error().message();
  EXPECT_THAT(message, HasSubstr("has 4 problems"));
  for (std::string_view field : {"base_url", "allow", "allowed_callers", "token"}) {
    EXPECT_THAT(message, HasSubstr("g.yaml:3: bare." + std::string(field) + ": is missing"));
  }
}

TEST(GrantsTest, RefusesTopLevelMistakes) {
  struct Case {
    std::string_view text;
    std::string_view says;
  };
  for (const Case& bad : std::vector<Case>{
           {"", "g.yaml:1: version: is missing: the file is empty."},
           {"# only a comment\n", "version: is missing"},
           {"profiles: {}\n", "g.yaml:1: version: is missing"},
           {"version: 1\n", "g.yaml:1: profiles: is missing"},
           {"version: '1'\nprofiles: {}\n", "g.yaml:1: version: must be 1"},
           {"- a\n- b\n", "g.yaml:1: file: must be a mapping with the keys version and profiles."},
           {"just text\n", "g.yaml:1: file: must be a mapping"},
           {"version: 1\nprofiles: [a]\n", "g.yaml:2: profiles: must be a mapping"},
           {"version: 1\nprofiles:\n  a: 3\n", "g.yaml:3: a: must be a mapping, not a scalar"},
           {"version: 1\nversion: 1\nprofiles: {}\n", "g.yaml:2: version: appears more than once"},
           {"version: 1\nprofiles:\n  a: [\n", "g.yaml:4: syntax: the file is not valid"},
           {"{\"version\": 1, \"profiles\": {\"a\": }\n", "syntax: the file is not valid"},
           {"version: 1\nprofiles:\n  x: {}\n  x: {}\n",
            "g.yaml:4: profiles.x: appears more than once"},
       }) {
    auto grants = ParseGrants(bad.text, "g.yaml");
    ASSERT_FALSE(grants.ok()) << bad.text;
    EXPECT_THAT(grants.error().message(), HasSubstr(bad.says)) << bad.text;
  }
}

std::string Profile(std::string_view fields) {
  return "version: 1\nprofiles:\n  p:\n    base_url: https://api.example.com\n"
         "    allowed_callers: [alice]\n    token: {source: static, env: TOKEN}\n" +
         std::string(fields);
}

TEST(GrantsTest, ChecksEachFieldsValues) {
  struct Case {
    std::string_view fields;
    std::string_view says;
  };
  for (const Case& bad : std::vector<Case>{
           {"    allow: GET /a\n", "p.allow: must be a non-empty list"},
           {"    allow: []\n", "p.allow: must be a non-empty list"},
           {"    allow: [[GET /a]]\n", "p.allow[0]: must be a string, not a list"},
           {"    allow: [GET /a]\n    scopes: [\"a b\"]\n", "p.scopes[0]: \"a b\" is not a scope"},
           {"    allow: [GET /a]\n    scopes: [a, a]\n", "p.scopes[1]: \"a\" is listed twice"},
           {"    allow: [GET /a]\n    scopes: read\n", "p.scopes: must be a list"},
           {"    allow: [GET /a]\n    scopes:\n      - ok\n      - {a: b}\n",
            "g.yaml:10: p.scopes[1]: must be a string, not a mapping"},
           {"    allow: [GET /a]\n    max_calls: 100001\n", "100001 is out of range"},
           {"    allow: [GET /a]\n    max_calls: -1\n", "\"-1\" is not"},
           {"    allow: [GET /a]\n    max_calls: 1.5\n", "\"1.5\" is not"},
           {"    allow: [GET /a]\n    max_calls: ~\n", "not empty"},
           {"    allow: [GET /a]\n    allow_in_sessions: \"true\"\n", "must be true or false"},
           {"    allow: [GET /a]\n    route_max_calls: {GET /a: 0}\n", "0 is out of range"},
           {"    allow: [GET /a]\n    route_max_calls: [GET /a]\n", "must be a mapping"},
           {"    allow: [GET /a, GET /a/*]\n    batch_of: {GET /a/*: GET /b}\n",
            "\"GET /b\" is not one of this profile's allow entries"},
           {"    allow: [GET /a]\n    batch_of: {GET /a: GET /a}\n", "names the same route"},
           {"    allow: [GET /a]\n    health_check: GET /health/*\n", "concrete path"},
           {"    allow: [GET /a]\n    health_check: GET health\n", "must start with"},
       }) {
    auto grants = ParseGrants(Profile(bad.fields), "g.yaml");
    ASSERT_FALSE(grants.ok()) << bad.fields;
    EXPECT_THAT(grants.error().message(), HasSubstr(bad.says)) << bad.fields;
  }
  EXPECT_TRUE(ParseGrants(Profile("    allow: [GET /a]\n    health_check: HEAD /\n"), "g").ok());
}

TEST(GrantsTest, ChecksCallersAndTokens) {
  auto with = [](std::string_view callers, std::string_view token) {
    return "version: 1\nprofiles:\n  p:\n    base_url: https://api.example.com\n    allow: [GET "
           "/a]\n"
           "    allowed_callers: " +
           std::string(callers) + "\n    token: " + std::string(token) + "\n";
  };
  struct Case {
    std::string text;
    std::string_view says;
  };
  for (const Case& bad : std::vector<Case>{
           {with("[alice, alice]", "{source: static, env: T}"), "\"alice\" is listed twice"},
           {with("[\"-alice\"]", "{source: static, env: T}"), "is not a caller name"},
           {with("[\"a b\"]", "{source: static, env: T}"), "is not a caller name"},
           {with("alice", "{source: static, env: T}"), "must be a non-empty list"},
           {with("[alice]", "static"), "p.token: must be a mapping"},
           {with("[alice]", "{env: T}"), "p.token.source: is missing"},
           {with("[alice]", "{source: static, env: \"A-B\"}"), "not an environment variable"},
           {with("[alice]", "{source: jwt, secret_env: S}"), "p.token.audience: is missing"},
           {with("[alice]", "{source: jwt, audience: a}"), "p.token.secret_env: is missing"},
           {with("[alice]", "{source: jwt, secret_env: S, audience: a, ttl_seconds: 0}"),
            "0 is out of range"},
           {with("[alice]", "{source: jwt, secret_env: S, audience: a, env: T}"),
            "p.token.env: is not a field of a jwt token"},
           {with("[alice]", "{source: static, env: T, secret_env: S}"),
            "p.token.secret_env: is not a field of a static token (known: source, env)."},
           {with("[alice]", "{source: static, evn: T}"),
            "p.token.evn: is not a field of a static token; did you mean env?"},
       }) {
    auto grants = ParseGrants(bad.text, "g.yaml");
    ASSERT_FALSE(grants.ok()) << bad.text;
    EXPECT_THAT(grants.error().message(), HasSubstr(bad.says)) << bad.text;
  }
  auto jwt = ParseGrants(with("[alice]", "{source: jwt, secret_env: S, audience: a}"), "g");
  ASSERT_TRUE(jwt.ok()) << jwt.error().ToString();
  EXPECT_EQ(std::get<JwtTokenSource>(jwt->ForCaller("p", "alice")->token).ttl_seconds,
            kDefaultJwtTtlSeconds);
}

TEST(GrantsTest, WarnsAboutCapsAboveMaxCalls) {
  auto grants = ParseGrants(
      Profile("    allow: [GET /a]\n    max_calls: 5\n    route_max_calls: {GET /a: 9}\n"), "g");
  ASSERT_TRUE(grants.ok()) << grants.error().ToString();
  EXPECT_THAT(grants->Warnings(), ElementsAre(HasSubstr("above its max_calls")));
}

TEST(GrantsTest, ReadsJsonWithTabsCrlfAndAByteOrderMark) {
  std::string json(kFullJson);
  std::string tabbed;
  for (char c : json) {
    if (c == '\n') {
      tabbed += "\r\n\t";
    } else {
      tabbed += c;
    }
  }
  auto grants = ParseGrants("\xEF\xBB\xBF" + tabbed, "tabs.json");
  ASSERT_TRUE(grants.ok()) << grants.error().ToString();
  ExpectFullExample(*grants);
}

TEST(GrantsTest, RefusesHostileDocumentsWithoutThrowing) {
  // Deep nesting: yaml-cpp's depth guard throws, and ParseGrants answers.
  std::string deep = "version: 1\nprofiles: " + std::string(5000, '[') + std::string(5000, ']');
  auto grants = ParseGrants(deep, "deep.yaml");
  ASSERT_FALSE(grants.ok());
  EXPECT_THAT(grants.error().message(), HasSubstr("deep.yaml:"));
  // Binary junk.
  auto junk = ParseGrants(std::string("\0\x01\xff{[:", 7), "junk");
  ASSERT_FALSE(junk.ok());
  EXPECT_THAT(junk.error().message(), HasSubstr("junk:1: file: must be a mapping"));
  // A tag on a number makes it something else.
  auto tagged = ParseGrants("version: !!str 1\nprofiles: {}\n", "tag.yaml");
  ASSERT_FALSE(tagged.ok());
  EXPECT_THAT(tagged.error().message(), HasSubstr("tag.yaml:1: version: must be 1"));
  // An alias repeats a profile's fields, and its problems, at the alias.
  auto aliased = ParseGrants("version: 1\nprofiles:\n  a: &x {base_url: 'https://a.b'}\n  b: *x\n",
                             "alias.yaml");
  ASSERT_FALSE(aliased.ok());
  EXPECT_THAT(aliased.error().message(), HasSubstr("alias.yaml:4: b.allow: is missing"));
}

TEST(GrantsTest, ValidatesProfileNames) {
  EXPECT_TRUE(IsValidProfileName("inventory"));
  EXPECT_TRUE(IsValidProfileName("0.api_v2-x"));
  EXPECT_TRUE(IsValidProfileName(std::string(64, 'a')));
  EXPECT_FALSE(IsValidProfileName(std::string(65, 'a')));
  EXPECT_FALSE(IsValidProfileName(""));
  EXPECT_FALSE(IsValidProfileName("Inventory"));
  EXPECT_FALSE(IsValidProfileName(".hidden"));
  EXPECT_FALSE(IsValidProfileName("-x"));
  EXPECT_FALSE(IsValidProfileName("a/b"));
}

// The text of the first fenced block opened with "```<language>" in `page`.
std::string FencedBlock(const std::string& page, std::string_view language) {
  std::string fence = "\n```" + std::string(language) + "\n";
  std::size_t start = page.find(fence);
  if (start == std::string::npos) return "";
  start += fence.size();
  std::size_t end = page.find("\n```", start);
  return page.substr(start, end - start + 1);
}

TEST(GrantsTest, TheExamplesOfTheDocsAreValidAndAgree) {
  std::ifstream file(PLIMSOLL_GRANTS_DOC);
  ASSERT_TRUE(file.good()) << PLIMSOLL_GRANTS_DOC;
  std::stringstream page;
  page << file.rdbuf();
  std::string yaml = FencedBlock(page.str(), "yaml");
  std::string json = FencedBlock(page.str(), "json");
  ASSERT_FALSE(yaml.empty());
  ASSERT_FALSE(json.empty());
  auto from_yaml = ParseGrants(yaml, "docs/grants.md (yaml)");
  auto from_json = ParseGrants(json, "docs/grants.md (json)");
  ASSERT_TRUE(from_yaml.ok()) << from_yaml.error().ToString();
  ASSERT_TRUE(from_json.ok()) << from_json.error().ToString();
  ExpectFullExample(*from_yaml);
  ExpectFullExample(*from_json);
}

}  // namespace
}  // namespace plimsoll::broker
