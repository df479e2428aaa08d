"""The model every layer shares, module by module: the classifier, the writer, the settings, the
fields, what a request is read as."""
