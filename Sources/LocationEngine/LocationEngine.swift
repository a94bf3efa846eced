import Geodesy

/// The engine (DESIGN.md: a pure step function).
public enum LocationEngineInfo {}
