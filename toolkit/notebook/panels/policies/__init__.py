"""What each policy would do with a sample, side by side (toolkit.compare_policies)."""
