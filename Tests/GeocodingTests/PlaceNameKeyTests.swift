import Geocoding
import Testing

@Suite struct PlaceNameKeyTests {
  @Test(arguments: [
    ("Zürich", "zurich"), ("ZURICH", "zurich"), ("  Zurich ", "zurich"), ("São Paulo", "sao paulo"),
    ("Val-d'Or", "val d or"), ("Straße", "strasse"), ("Łódź", "lodz"),
    ("Ærøskøbing", "aeroskobing"),
    ("İstanbul", "istanbul"), ("Washington, D.C.", "washington d c"), ("", ""), ("!!!", ""),
    ("東京", "東京"),
  ])
  func folds(_ name: String, _ key: String) {
    #expect(PlaceNameKey.fold(name) == key)
  }

  @Test func foldingIsIdempotent() {
    for name in ["Zürich", "Val-d'Or", "Ærøskøbing", "Side by  side"] {
      let key = PlaceNameKey.fold(name)
      #expect(PlaceNameKey.fold(key) == key)
    }
  }

  @Test func hashIsFNV1a64() {
    // FNV-1a 64 test vectors from the IETF draft: "" and "a".
    #expect(PlaceNameKey.hash("") == 0xCBF2_9CE4_8422_2325)
    #expect(PlaceNameKey.hash("a") == 0xAF63_DC4C_8601_EC8C)
  }
}
