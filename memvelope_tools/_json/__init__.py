"""The one JSON reader at the bottom of the package: the C boundary scanner and its Python twin, the element reader."""
