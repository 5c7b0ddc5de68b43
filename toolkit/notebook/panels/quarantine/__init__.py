"""What a table's quarantine holds: inspect, replay, discard (toolkit.inspect_quarantine)."""
