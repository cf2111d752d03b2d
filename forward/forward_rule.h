#pragma once
// What the store makes outbox entries of for one [[forward]] block (store::ForwardRule):
// its name, mode and event globs. One translation for the store options of `serve`, the
// disk budget and the sender.
#include "config/settings.h"
#include "store/outbox.h"

namespace hh::forward {

inline store::ForwardRule forward_rule(const config::ForwardSettings& f) {
  return store::ForwardRule{
      .destination = f.name,
      .mode = f.mode == "deliveries" ? store::ForwardMode::deliveries : store::ForwardMode::changes,
      .events = f.events};
}

}  // namespace hh::forward
