"""The data folder's file modes, pure (no Django): settings, checks and commands call it."""
