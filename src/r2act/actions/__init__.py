"""Recovery semantics: operation catalogue, policy, action spaces, plan sets, validity, mapper.

Pure functions over typed models; the policy is a named, versioned object."""
