from twisted.application.service import ServiceMaker

wardle = ServiceMaker("kubetwist wardle example", "examples.wardle.tap",
                      "The sample extension API server (wardle.example.com), from a source "
                      "checkout.", "wardle")
