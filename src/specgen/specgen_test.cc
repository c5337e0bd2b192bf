#include "specgen/specgen.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "specgen/route_path.h"
#include "specgen/summary.h"

namespace plimsoll::specgen {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A small inventory API with one of each thing specgen must handle.
constexpr std::string_view kInventory = R"(openapi: 3.0.3
info:
  title: Inventory API
  version: "2.1"
servers:
  - url: https://inventory.example.com/v1/
paths:
  /items:
    get:
      tags: [items]
      summary: List items
      parameters:
        - $ref: '#/components/parameters/limit'
        - name: cursor
          in: query
        - name: X-Trace
          in: header
    post:
      tags: [items]
      summary: Create an item
  /items/{itemId}:
    parameters:
      - name: itemId
        in: path
        required: true
    get:
      tags: [items]
      description: |
        Returns one item. It includes the stock level
        and the warehouse.
    delete:
      tags: [items]
      summary: Delete an item
  /items/{itemId}/history:
    get:
      tags: [history]
      operationId: itemHistory
  /files/{name}.json:
    get:
      tags: [files]
      summary: A file
  /a/../b:
    get:
      summary: Dots
  /search;q:
    get:
      summary: Matrix
  /health:
    head:
      summary: Is it up
components:
  parameters:
    limit:
      name: limit
      in: query
      required: true
)";

Spec MustGenerate(std::string_view document, const Options& options = {}) {
  auto spec = Generate(document, options);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().ToString());
  return spec.ok() ? *spec : Spec{};
}

TEST(SpecgenTest, ReadOnlyRoutesBecomeAllowEntriesWithStarSegmentsUnderTheServersPath) {
  Spec spec = MustGenerate(kInventory);
  EXPECT_THAT(spec.allow, ElementsAre("GET /v1/items", "GET /v1/items/*", "GET /v1/items/*/history",
                                      "HEAD /v1/health"));
  EXPECT_EQ(spec.base_url, "https://inventory.example.com");
  EXPECT_EQ(spec.profile, "inventory-api");
  EXPECT_EQ(spec.title, "Inventory API");
  ASSERT_EQ(spec.routes.size(), 4u);
  EXPECT_EQ(spec.routes[1].path, "/v1/items/{itemId}");
}

TEST(SpecgenTest, PathsThatStarCannotSayAreLeftOutWithAWarningNamingThem) {
  Spec spec = MustGenerate(kInventory);
  ASSERT_EQ(spec.warnings.size(), 3u);
  EXPECT_THAT(spec.warnings[0], HasSubstr("Left out GET /files/{name}.json"));
  EXPECT_THAT(spec.warnings[0], HasSubstr("not a whole segment"));
  EXPECT_THAT(spec.warnings[1], HasSubstr("Left out GET /a/../b"));
  EXPECT_THAT(spec.warnings[2], HasSubstr("Left out GET /search;q"));
}

TEST(SpecgenTest, ParametersArePathOnesThenQueryOnesWithRequiredMarksAndRefsFollowed) {
  Spec spec = MustGenerate(kInventory);
  EXPECT_THAT(spec.routes[0].parameters,
              ElementsAre(Parameter{"limit", "query", true}, Parameter{"cursor", "query", false}));
  EXPECT_THAT(spec.routes[1].parameters, ElementsAre(Parameter{"itemId", "path", true}));
  // Undeclared path parameters still come from the template.
  EXPECT_THAT(spec.routes[2].parameters, ElementsAre(Parameter{"itemId", "path", true}));
}

TEST(SpecgenTest, SummaryIsTheSummaryElseTheFirstSentenceElseTheOperationId) {
  Spec spec = MustGenerate(kInventory);
  EXPECT_EQ(spec.routes[0].summary, "List items");
  EXPECT_EQ(spec.routes[1].summary, "Returns one item.");
  EXPECT_EQ(spec.routes[2].summary, "itemHistory");
}

TEST(SpecgenTest, APerItemRouteUnderASelectedCollectionRouteIsABatchHint) {
  Spec spec = MustGenerate(kInventory);
  EXPECT_THAT(spec.batch_of, ElementsAre(BatchHint{"GET /v1/items/*", "GET /v1/items"}));
  Options only_item;
  only_item.only = {"/items/{itemId}"};
  EXPECT_THAT(MustGenerate(kInventory, only_item).batch_of, IsEmpty());
}

TEST(SpecgenTest, MethodsWidensTheSelection) {
  Options options;
  options.methods = {"get", "POST", "Delete"};
  Spec spec = MustGenerate(kInventory, options);
  EXPECT_THAT(spec.allow, ElementsAre("GET /v1/items", "POST /v1/items", "GET /v1/items/*",
                                      "DELETE /v1/items/*", "GET /v1/items/*/history"));
  options.methods = {"FETCH"};
  auto bad = Generate(kInventory, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message(), HasSubstr("\"FETCH\" is not a method"));
}

TEST(SpecgenTest, OnlyKeepsATagOrAnExactPathAndWarnsAboutOnesThatMatchNothing) {
  Options options;
  options.only = {"history", "/health", "nothing-here"};
  Spec spec = MustGenerate(kInventory, options);
  EXPECT_THAT(spec.allow, ElementsAre("GET /v1/items/*/history", "HEAD /v1/health"));
  EXPECT_THAT(spec.warnings, ElementsAre(HasSubstr("--only \"nothing-here\" matched no")));
}

TEST(SpecgenTest, NothingSelectedIsAnError) {
  Options options;
  options.only = {"files"};
  auto spec = Generate(kInventory, options);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(spec.error().message(), HasSubstr("No operation of the document was selected"));
  EXPECT_THAT(spec.error().message(), HasSubstr("1 left out"));
}

TEST(SpecgenTest, BaseUrlFlagGivesTheOriginAndItsPathPrefixesTheRoutes) {
  Options options;
  options.base_url = "https://API.Example.org:8443/inventory";
  options.profile = "stock";
  Spec spec = MustGenerate(kInventory, options);
  EXPECT_EQ(spec.base_url, "https://api.example.org:8443");
  EXPECT_EQ(spec.allow[0], "GET /inventory/items");
  EXPECT_EQ(spec.profile, "stock");
  for (std::string bad : {"ftp://x", "/relative", "https://user@host", "https://h/?q=1"}) {
    options.base_url = bad;
    EXPECT_FALSE(Generate(kInventory, options).ok()) << bad;
  }
  options.base_url = "";
  options.profile = "no spaces";
  EXPECT_FALSE(Generate(kInventory, options).ok());
}

std::string WithServer(std::string_view servers) {
  return "openapi: 3.1.0\ninfo: {title: T, version: '1'}\n" + std::string(servers) +
         "paths:\n  /x:\n    get: {summary: X}\n";
}

TEST(SpecgenTest, ARelativeOrTemplatedServerLeavesBaseUrlAPlaceholderWithAWarning) {
  Spec relative = MustGenerate(WithServer("servers: [{url: /api/v3}]\n"));
  EXPECT_EQ(relative.base_url, kFillIn);
  EXPECT_THAT(relative.allow, ElementsAre("GET /api/v3/x"));
  EXPECT_THAT(relative.warnings, ElementsAre(HasSubstr("is relative")));

  Spec templated = MustGenerate(
      WithServer("servers:\n  - url: '{scheme}://data.example.com/ds'\n    variables:\n"
                 "      scheme: {default: https, enum: [https, http]}\n"));
  EXPECT_EQ(templated.base_url, kFillIn);
  EXPECT_THAT(templated.allow, ElementsAre("GET /ds/x"));
  EXPECT_THAT(templated.warnings, ElementsAre(HasSubstr("https://data.example.com/ds")));

  Spec none = MustGenerate(WithServer(""));
  EXPECT_EQ(none.base_url, kFillIn);
  EXPECT_THAT(none.warnings, ElementsAre(HasSubstr("names no server")));

  Spec cleartext = MustGenerate(WithServer("servers: [{url: 'http://api.example.com'}]\n"));
  EXPECT_EQ(cleartext.base_url, "http://api.example.com");
  EXPECT_THAT(cleartext.warnings, ElementsAre(HasSubstr("cleartext")));
  Spec loopback = MustGenerate(WithServer("servers: [{url: 'http://127.0.0.1:9000'}]\n"));
  EXPECT_THAT(loopback.warnings, IsEmpty());
}

TEST(SpecgenTest, AnOperationWithAServerOfItsOwnIsLeftOut) {
  Spec spec = MustGenerate(
      "openapi: 3.0.0\ninfo: {title: T, version: '1'}\nservers: [{url: 'https://a.example'}]\n"
      "paths:\n  /x:\n    get: {summary: X}\n  /y:\n    servers: [{url: 'https://b.example'}]\n"
      "    get: {summary: Y}\n");
  EXPECT_THAT(spec.allow, ElementsAre("GET /x"));
  EXPECT_THAT(spec.warnings, ElementsAre(HasSubstr("Left out GET /y: it is served from")));
}

TEST(SpecgenTest, JsonDocumentsAndSwaggerAndGarbage) {
  Spec spec = MustGenerate(
      R"({"openapi": "3.1.0", "info": {"title": "J", "version": "1"},
          "servers": [{"url": "https://j.example"}],
          "paths": {"/a\/b/{id}": {"get": {"summary": "Slash escaped"}}}})");
  EXPECT_THAT(spec.allow, ElementsAre("GET /a/b/*"));

  auto swagger = Generate(R"({"swagger": "2.0", "paths": {}})", {});
  ASSERT_FALSE(swagger.ok());
  EXPECT_THAT(swagger.error().message(), HasSubstr("Swagger 2.0"));
  auto broken = Generate("openapi: 3.0.0\npaths: {\n", {});
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.error().message(), HasSubstr("line "));
  EXPECT_FALSE(Generate("- a list", {}).ok());
  EXPECT_FALSE(Generate("openapi: 3.0.0\npaths: [1]\n", {}).ok());
  EXPECT_FALSE(Generate("", {}).ok());
  // Deep nesting is an error, not a crash.
  EXPECT_FALSE(Generate(std::string(100000, '['), {}).ok());
}

TEST(SpecgenTest, ReferencesThatLoopOrLeadNowhereAreIgnored) {
  Spec spec = MustGenerate(
      "openapi: 3.0.0\ninfo: {title: T, version: '1'}\nservers: [{url: 'https://a.example'}]\n"
      "paths:\n  /x:\n    get:\n      parameters:\n"
      "        - $ref: '#/components/parameters/loop'\n"
      "        - $ref: 'other.yaml#/p'\n"
      "        - $ref: '#/components/parameters/missing'\n"
      "        - $ref: '#/components/parameters/a~1b/0'\n"
      "        - $ref: '#/servers/7'\n"
      "        - $ref: '#/components/parameters/a~1b'\n"
      "        - $ref: '#/components/parameters/c~01'\n"
      "        - $ref: '#/components/list/1'\n"
      "components:\n  parameters:\n    loop: {$ref: '#/components/parameters/loop'}\n"
      "    a/b: {name: slashed, in: query}\n"
      "    c~1: {name: tilde, in: query}\n"
      "  list: [{name: first, in: query}, {name: second, in: query}]\n");
  EXPECT_THAT(spec.routes[0].parameters,
              ElementsAre(Parameter{"slashed", "query", false}, Parameter{"tilde", "query", false},
                          Parameter{"second", "query", false}));
}

TEST(SpecgenTest, AQueryParameterThatCarriesTheApiKeyIsNotListed) {
  Spec spec = MustGenerate(
      "openapi: 3.0.0\ninfo: {title: T, version: '1'}\nservers: [{url: 'https://a.example'}]\n"
      "paths:\n  /x:\n    get:\n      parameters:\n"
      "        - {name: key, in: query, required: true}\n        - {name: page, in: query}\n"
      "components:\n  securitySchemes:\n    k: {type: apiKey, in: query, name: key}\n"
      "    h: {type: apiKey, in: header, name: page}\n");
  EXPECT_THAT(spec.routes[0].parameters, ElementsAre(Parameter{"page", "query", false}));
}

TEST(SpecgenTest, AMatrixStylePathParameterLeavesTheRouteOut) {
  Spec spec = MustGenerate(
      "openapi: 3.0.0\ninfo: {title: T, version: '1'}\nservers: [{url: 'https://a.example'}]\n"
      "paths:\n  /m/{color}:\n    get:\n      parameters:\n"
      "        - {name: color, in: path, required: true, style: matrix}\n"
      "  /l/{color}:\n    get:\n      parameters:\n"
      "        - {name: color, in: path, required: true, style: label}\n");
  EXPECT_THAT(spec.allow, ElementsAre("GET /l/*"));
  EXPECT_THAT(spec.warnings, ElementsAre(HasSubstr("Left out GET /m/{color}: its path parameter "
                                                   "\"color\" has style matrix")));
}

TEST(SpecgenTest, DistinctTemplatesOnTheSameAllowEntryAreGrantedOnce) {
  Spec spec = MustGenerate(
      "openapi: 3.0.0\ninfo: {title: T, version: '1'}\nservers: [{url: 'https://a.example'}]\n"
      "paths:\n  /u/{id}:\n    get: {summary: By id}\n  /u/{name}:\n    get: {summary: By name}\n");
  EXPECT_THAT(spec.allow, ElementsAre("GET /u/*"));
  EXPECT_EQ(spec.routes.size(), 2u);
}

TEST(SpecgenTest, YamlAndJsonProfilesParseBackToTheSameGrantsFile) {
  Spec spec = MustGenerate(kInventory);
  YAML::Node yaml = YAML::Load(RenderProfileYaml(spec));
  YAML::Node profile = yaml["profiles"]["inventory-api"];
  EXPECT_EQ(profile["base_url"].as<std::string>(), "https://inventory.example.com");
  EXPECT_EQ(profile["allow"].as<std::vector<std::string>>(), spec.allow);
  EXPECT_EQ(profile["allowed_callers"][0].as<std::string>(), "<fill in>");
  EXPECT_EQ(profile["batch_of"]["GET /v1/items/*"].as<std::string>(), "GET /v1/items");

  nlohmann::json json = nlohmann::json::parse(RenderProfileJson(spec));
  const nlohmann::json& same = json["profiles"]["inventory-api"];
  EXPECT_EQ(same["base_url"], "https://inventory.example.com");
  EXPECT_EQ(same["allow"].get<std::vector<std::string>>(), spec.allow);
  EXPECT_EQ(same["allowed_callers"], nlohmann::json::array({"<fill in>"}));
  EXPECT_EQ(same["batch_of"]["GET /v1/items/*"], "GET /v1/items");
}

TEST(SpecgenTest, ThePreambleHasOneLinePerRouteAndStaysACommentBlock) {
  Spec spec = MustGenerate(kInventory);
  std::vector<std::string> lines = PreambleLines(spec);
  ASSERT_EQ(lines.size(), 1 + 4 + 1 + 1u);
  EXPECT_EQ(lines[1], "GET /v1/items (query: limit required, cursor): List items");
  EXPECT_EQ(lines[2], "GET /v1/items/{itemId} (path: itemId): Returns one item.");
  EXPECT_EQ(lines[4], "HEAD /v1/health: Is it up");
  EXPECT_EQ(lines[5],
            "To read many items, prefer one GET /v1/items to one GET /v1/items/{itemId} per item.");
  EXPECT_THAT(lines[6], HasSubstr("host.get(path)"));
  EXPECT_THAT(lines[6], HasSubstr("plimsoll_host.get"));
  EXPECT_THAT(lines[6], HasSubstr("/run/plimsoll/api.sock"));
  EXPECT_THAT(lines[6], HasSubstr("no credential is needed or available"));

  // A summary that tries to leave the comment stays on its line.
  Spec hostile = MustGenerate(
      "openapi: 3.0.0\ninfo: {title: \"T\\nprofiles: {}\", version: '1'}\n"
      "servers: [{url: 'https://a.example'}]\n"
      "paths:\n  /x:\n    get: {summary: \"a\\nprofiles: {evil: 1}\\u2028b\"}\n");
  std::string text = RenderProfileYaml(hostile) + "---\n" + RenderPreamble(hostile, true);
  std::vector<YAML::Node> documents = YAML::LoadAll(text);
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents[0]["profiles"].size(), 1u);
  EXPECT_TRUE(documents[1].IsNull());
}

TEST(SummaryTest, OneLineIsCutAt120CharactersOnACodePoint) {
  EXPECT_EQ(OneLineSummary("  Get\n\ta   thing ", "", ""), "Get a thing");
  EXPECT_EQ(OneLineSummary("", "First one. Second.", ""), "First one.");
  EXPECT_EQ(OneLineSummary("", "Version 1.2 is fine. Next", ""), "Version 1.2 is fine.");
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += "é ";
  std::string cut = OneLineSummary(long_text, "", "");
  EXPECT_TRUE(cut.ends_with("..."));
  size_t characters = 0;
  for (unsigned char c : cut) characters += (c & 0xC0) != 0x80;
  EXPECT_LE(characters, kSummaryMaxCharacters);
  EXPECT_GE(characters, kSummaryMaxCharacters - 2);
}

TEST(RoutePathTest, StarStandsForWholeTemplatedSegmentsOnly) {
  EXPECT_EQ(*AllowPathFor("/"), "/");
  EXPECT_EQ(*AllowPathFor("/a/{b}/c/{d}"), "/a/*/c/*");
  EXPECT_EQ(*AllowPathFor("/a/"), "/a/");
  for (std::string_view bad :
       {"a/b", "/a/{b}.json", "/a/x{b}", "/a/{b}{c}", "/{}", "/a//b", "/a/./b", "/..", "/a?b",
        "/a#b", "/a;b", "/a%2fb", "/a/*", "/a\\b", "/a b", "/a\tb"}) {
    EXPECT_FALSE(AllowPathFor(bad).ok()) << bad;
  }
  EXPECT_THAT(TemplateNames("/a/{b}/c/{d}.json/{e}"), ElementsAre("b", "e"));
}

TEST(RoutePathTest, ServerUrlsSplitIntoOriginAndPath) {
  auto split = SplitServerUrl("HTTPS://Api.Example.com:8443/v2/");
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->origin, "https://api.example.com:8443");
  EXPECT_EQ(split->path, "/v2");
  EXPECT_EQ(SplitServerUrl("http://[::1]:80")->origin, "http://[::1]:80");
  EXPECT_TRUE(IsLoopbackOrigin("http://[::1]:80"));
  EXPECT_TRUE(IsLoopbackOrigin("http://127.0.0.1:80"));
  EXPECT_TRUE(IsLoopbackOrigin("http://localhost"));
  EXPECT_FALSE(IsLoopbackOrigin("http://127.evil.example"));
}

}  // namespace
}  // namespace plimsoll::specgen
