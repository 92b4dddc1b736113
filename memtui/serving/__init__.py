"""What agents are served: boot context, the pre-/post-action gates and flow matching."""
