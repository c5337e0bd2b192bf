#include "trial/plant_registry.h"

#include <array>
#include <string>

namespace plimsoll::trial {

namespace {

constexpr std::array kPlants = {
    PlantEntry{"cartpole", &CreateCartpolePlant},
    PlantEntry{"shower", &CreateShowerPlant},
    PlantEntry{"ship", &CreateShipPlant},
    PlantEntry{"buck", &CreateBuckPlant},
    PlantEntry{"swingup", &CreateSwingupPlant},
    PlantEntry{"blackhole", &CreateBlackholePlant},
    PlantEntry{"twin", &CreateTwinPlant},
    PlantEntry{"satclock", &CreateSatclockPlant},
    PlantEntry{"doubleslit", &CreateDoubleslitPlant},
};

}  // namespace

std::span<const PlantEntry> Plants() {
  return kPlants;
}

Expected<std::unique_ptr<Plant>> CreatePlant(std::string_view name) {
  std::string known;
  for (const PlantEntry& entry : kPlants) {
    if (entry.name == name) return entry.create();
    known += known.empty() ? "" : ", ";
    known += entry.name;
  }
  return Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument,
                 "There is no plant named \"" + std::string(name) + "\" (known: " + known + ").");
}

}  // namespace plimsoll::trial
