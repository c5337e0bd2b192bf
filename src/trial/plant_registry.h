// The plants this runner carries, by name. Plants are linked in (each is a
// wasm2c static library, plimsoll_plant_NAME); adding one is a file NAME_plant.cc
// with its factory (see cartpole_plant.cc) plus one row in plant_registry.cc.
//
// Usage:
//   auto plant = CreatePlant("cartpole");
//   if (!plant.ok()) return plant.error();      // unknown name, or a broken module
//
// Thread-safety: the table is constant; CreatePlant is as thread-safe as
// Plant (one alive per thread).
#ifndef PLIMSOLL_TRIAL_PLANT_REGISTRY_H_
#define PLIMSOLL_TRIAL_PLANT_REGISTRY_H_

#include <memory>
#include <span>
#include <string_view>

#include "plimsoll/error.h"
#include "trial/plant.h"

namespace plimsoll::trial {

using PlantFactory = Expected<std::unique_ptr<Plant>> (*)();

struct PlantEntry {
  std::string_view name;  // as on the command line and in scenario files
  PlantFactory create;
};

// Every plant, in a fixed order.
std::span<const PlantEntry> Plants();

// A fresh instance of the plant `name` (instantiated, _initialize'd, its ABI
// version and exchange buffer checked). Errors: an unknown name
// (kInvalidArgument, listing the known ones) or a module that trapped or
// broke its contract (kInternal).
Expected<std::unique_ptr<Plant>> CreatePlant(std::string_view name);

// The factories (one file each).
Expected<std::unique_ptr<Plant>> CreateCartpolePlant();
Expected<std::unique_ptr<Plant>> CreateShowerPlant();
Expected<std::unique_ptr<Plant>> CreateShipPlant();
Expected<std::unique_ptr<Plant>> CreateBuckPlant();
Expected<std::unique_ptr<Plant>> CreateSwingupPlant();
Expected<std::unique_ptr<Plant>> CreateBlackholePlant();
Expected<std::unique_ptr<Plant>> CreateTwinPlant();
Expected<std::unique_ptr<Plant>> CreateSatclockPlant();
Expected<std::unique_ptr<Plant>> CreateDoubleslitPlant();

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_PLANT_REGISTRY_H_
