// plimsoll-record-vectors: writes testdata/records/vectors.json.
//
//   plimsoll-record-vectors                 # to stdout
//   plimsoll-record-vectors --output FILE   # to FILE
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "record/vectors.h"

int main(int argc, char** argv) {
  std::string output;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--output") == 0 && i + 1 < argc) {
      output = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--output FILE]\n", argv[0]);
      return 2;
    }
  }
  std::string text = plimsoll::record::GenerateVectorsJson();
  if (output.empty()) {
    std::cout << text;
    return std::cout.good() ? 0 : 1;
  }
  std::ofstream file(output, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) {
    std::fprintf(stderr, "plimsoll-record-vectors: cannot write %s\n", output.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s\n", output.c_str());
  return 0;
}
