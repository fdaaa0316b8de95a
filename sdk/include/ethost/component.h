// component.h: the base of every component interface — capability lookup by interface id (COM's
// QueryInterface), so optional features are found without dynamic_cast across plugin boundaries.
#pragma once

#include <string_view>

#include "ethost/export.h"

namespace et {

// Capabilities are extra interfaces a component may offer (et::Predictor, et::dist::ShardedOptimizer, ...).
// Each declares `static constexpr std::string_view kInterfaceId = "et.<Name>/<version>";` — a string, so the
// lookup works between libraries loaded with RTLD_LOCAL and never depends on type_info. A new version of a
// capability gets a new id; old ids keep their meaning.
class ET_API Component {
 public:
  virtual ~Component();
  // The component's implementation of the interface `id`, or nullptr when it does not offer it.
  // Implementations answer for the interfaces they offer and pass every other id to their base class (see
  // et::offer below).
  virtual void* query_interface(std::string_view id);
};

// The capability I of a component, or nullptr: `if (auto* p = et::query<et::Predictor>(app)) ...`.
template <class I>
I* query(Component& c) {
  return static_cast<I*>(c.query_interface(I::kInterfaceId));
}
template <class I>
const I* query(const Component& c) {
  return static_cast<const I*>(const_cast<Component&>(c).query_interface(I::kInterfaceId));
}

// For query_interface overrides: the first of the interfaces Caps... whose id matches, as implemented by
// self.
//   void* query_interface(std::string_view id) override {
//     if (void* p = et::offer<et::Predictor>(this, id)) return p;
//     return App::query_interface(id);
//   }
template <class... Caps, class Self>
void* offer(Self* self, std::string_view id) {
  void* found = nullptr;
  ((found == nullptr && id == Caps::kInterfaceId ? (found = static_cast<Caps*>(self), 0) : 0), ...);
  return found;
}

}  // namespace et
