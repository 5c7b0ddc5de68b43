"""One batch: options, observation, profile, routing, quarantine, offsets."""
