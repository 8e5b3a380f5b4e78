import LedeBasics
import Wikimedia
// The embedded default's articles, written for Lede in the shapes Wikipedia returns. Extracts follow the
// style of real leads, including their IPA and pronunciation parentheticals (which Lede strips for previews).

struct EmbeddedArticle: Sendable {
    var title: String
    var description: String?
    var extract: String
    var type: String = "standard"
    var ns: Int = 0
    var lat: Double?
    var lon: Double?
    var image: String?
    /// Topic tags: `morelike` answers with articles that share one.
    var topics: [String] = []
    var pageid: Int = 0

    var isDisambiguation: Bool { type == "disambiguation" }
}

private func a(_ title: String, _ description: String?, _ extract: String, at: (Double, Double)? = nil, image: String? = nil,
               topics: [String] = [], type: String = "standard", ns: Int = 0) -> EmbeddedArticle {
    EmbeddedArticle(title: title, description: description, extract: extract, type: type, ns: ns, lat: at?.0, lon: at?.1,
                    image: image, topics: topics)
}

enum EmbeddedArticles {
    static let byLanguage: [String: [EmbeddedArticle]] = {
        var out: [String: [EmbeddedArticle]] = ["en": english, "de": german, "it": italian, "zh": chinese.map(\.hans)]
        for (lang, list) in out {
            let base = ["en": 10_000, "de": 20_000, "it": 30_000, "zh": 40_000][lang] ?? 50_000
            out[lang] = list.enumerated().map { i, art in var x = art; x.pageid = base + i * 7 + 3; return x }
        }
        return out
    }()

    /// Redirects per language (`from` → `to`), for search's "Redirected from".
    /// Each edition's main page, as `meta=siteinfo` names it.
    static let mainPages = ["en": "Main Page", "de": "Wikipedia:Hauptseite", "it": "Pagina principale", "zh": "Wikipedia:首页"]

    static let redirects: [String: [String: String]] = [
        "en": ["Bombay": "Mumbai", "Einstein": "Albert Einstein", "København": "Copenhagen", "Museo del Prado": "Prado Museum",
               "Ada Byron": "Ada Lovelace", "Maria Skłodowska": "Marie Curie"],
        "de": ["Bombay": "Mumbai", "Einstein": "Albert Einstein"],
        "it": ["Bombay": "Mumbai", "Einstein": "Albert Einstein", "Copenaghen (città)": "Copenaghen"],
    ]

    static let english: [EmbeddedArticle] = [
        a("Amsterdam", "Capital and largest city of the Netherlands",
          "Amsterdam (/ˈæmstərdæm/ AM-stər-dam, US also /ˌæmstərˈdæm/ AM-stər-DAM; Dutch: [ˌɑmstərˈdɑm] ⓘ; lit. 'Dam on the Amstel') is the capital and largest city of the Kingdom of the Netherlands. It has a population of 933,680 in June 2024 within the city proper.",
          at: (52.3725, 4.8925), image: "KeizersgrachtReguliersgrachtAmsterdam.jpg", topics: ["netherlands", "city", "capital"]),
        a("Mumbai", "Capital city of Maharashtra, India",
          "Mumbai (/mʊmˈbaɪ/ muum-BY; Marathi: [ˈmumbəi], ISO: Mumbaī), also known as Bombay (/bɒmˈbeɪ/ bom-BAY; its official name until 1995), is the capital city of the Indian state of Maharashtra. Mumbai is the financial capital and the most populous city proper of India.",
          at: (19.0761, 72.8775), image: "Mumbai_03-2016_30_skyline_at_dusk.jpg", topics: ["india", "city"]),
        a("Copenhagen", "Capital and largest city of Denmark",
          "Copenhagen (/ˌkoʊpənˈheɪɡən, -ˈhɑː-/ KOH-pən-HAY-gən, -⁠HAH-; Danish: København [kʰøpm̩ˈhɑwˀn] ⓘ) is the capital and most populous city of Denmark, with a population of 1.4 million in the urban area.",
          at: (55.6761, 12.5683), image: "Nyhavn_-_Copenhagen.jpg", topics: ["denmark", "city", "capital"]),
        a("Madrid", "Capital and largest city of Spain",
          "Madrid (/məˈdrɪd/ mə-DRID, Spanish: [maˈðɾið]) is the capital and most populous municipality of Spain. It has almost 3.5 million inhabitants and a metropolitan area population of approximately 7 million.",
          at: (40.4167, -3.7033), image: "Madrid_-_Sky_Bar_360%C2%BA_(Hotel_Riu_Plaza_Espa%C3%B1a).jpg", topics: ["spain", "city", "capital"]),
        a("Albert Einstein", "German-born physicist (1879–1955)",
          "Albert Einstein (/ˈaɪnstaɪn/ EYEN-styne; German: [ˈalbɛɐt ˈʔaɪnʃtaɪn] ⓘ; 14 March 1879 – 18 April 1955) was a German-born theoretical physicist who is best known for developing the theory of relativity. Einstein also made important contributions to quantum mechanics.",
          image: "Albert_Einstein_Head.jpg", topics: ["physics", "scientist"]),
        a("Marie Curie", "Polish-French physicist and chemist (1867–1934)",
          "Maria Salomea Skłodowska-Curie (Polish: [ˈmarja salɔˈmɛa skwɔˈdɔfska kʲiˈri] ⓘ; née Skłodowska; 7 November 1867 – 4 July 1934), known simply as Marie Curie (/ˈkjʊəri/ KURE-ee; French: [maʁi kyʁi]), was a Polish and naturalised-French physicist and chemist who conducted pioneering research on radioactivity.",
          image: "Marie_Curie_c._1920s.jpg", topics: ["physics", "chemistry", "scientist"]),
        a("Ada Lovelace", "English mathematician (1815–1852)",
          "Augusta Ada King, Countess of Lovelace (née Byron; 10 December 1815 – 27 November 1852) was an English mathematician and writer chiefly known for work on Charles Babbage's proposed mechanical general-purpose computer, the Analytical Engine.",
          image: "Ada_Lovelace_portrait.jpg", topics: ["computing", "mathematics", "scientist"]),
        a("Python (programming language)", "General-purpose programming language",
          "Python is a high-level, general-purpose programming language. Its design philosophy emphasizes code readability with the use of significant indentation. Python is dynamically type-checked and garbage-collected.",
          image: "Python-logo-notext.svg", topics: ["computing"]),
        a("Rijksmuseum", "National museum of the Netherlands in Amsterdam",
          "The Rijksmuseum (Dutch pronunciation: [ˈrɛiksmyˌzeːjʏm] ⓘ) is the national museum of the Netherlands dedicated to Dutch arts and history and is located in Amsterdam. The museum is located at the Museum Square in the borough of Amsterdam South.",
          at: (52.36, 4.885), image: "Rijksmuseum_Amsterdam_2016.jpg", topics: ["netherlands", "museum"]),
        a("Anne Frank House", "Writer's house and biographical museum in Amsterdam",
          "The Anne Frank House (Dutch: Anne Frank Huis) is a writer's house and biographical museum dedicated to Jewish wartime diarist Anne Frank. The building is located on the Prinsengracht canal in the centre of Amsterdam.",
          at: (52.3752, 4.884), image: "AnneFrankHouseAmsterdam.jpg", topics: ["netherlands", "museum"]),
        a("Vondelpark", "Public urban park in Amsterdam",
          "The Vondelpark (Dutch pronunciation: [ˈvɔndəlˌpɑrk]) is a public urban park of 47 hectares (120 acres) in Amsterdam, Netherlands. It is part of the borough of Amsterdam-Zuid and situated west from the Leidseplein and the Museumplein.",
          at: (52.358, 4.8686), image: "Vondelpark_Amsterdam.jpg", topics: ["netherlands", "park"]),
        a("Dam Square", "Town square in Amsterdam",
          "Dam Square or simply the Dam (Dutch: de Dam, pronounced [də ˈdɑm]) is a town square in Amsterdam, the capital of the Netherlands. Its notable buildings and frequent events make it one of the most well-known and important locations in the city.",
          at: (52.3731, 4.8926), image: "Dam_Square_Amsterdam.jpg", topics: ["netherlands", "square"]),
        a("Gateway of India", "Arch-monument in Mumbai",
          "The Gateway of India is an arch-monument completed in 1924 on the waterfront of Mumbai, India. It was erected to commemorate the landing of George V for his coronation as the Emperor of India in December 1911 at Strand Road near Wellington Fountain.",
          at: (18.922, 72.8347), image: "Mumbai_03-2016_69_Gateway_of_India.jpg", topics: ["india", "monument"]),
        a("Chhatrapati Shivaji Terminus", "Railway station in Mumbai",
          "Chhatrapati Shivaji Maharaj Terminus (officially Chhatrapati Shivaji Maharaj Terminus since 2017, formerly Victoria Terminus; Marathi: [t͡ʃʰət̪rəpət̪iː ʃiʋaːd͡ʒiː məɦaːrad͡ʒ ʈərminəs]) is a historic railway terminus and UNESCO World Heritage Site in Mumbai, Maharashtra, India.",
          at: (18.9398, 72.8355), image: "Chhatrapati_Shivaji_Terminus_(Victoria_Terminus).jpg", topics: ["india", "railway"]),
        a("Marine Drive, Mumbai", "Promenade in Mumbai",
          "Marine Drive is a 3.6-kilometre-long promenade along the Netaji Subhash Chandra Bose Road in Mumbai, India. The road and promenade were constructed by Pallonji Mistry in 1915.",
          at: (18.943, 72.823), image: "Marine_Drive_Skyline.jpg", topics: ["india", "street"]),
        a("Chhatrapati Shivaji Maharaj International Airport", "International airport serving Mumbai",
          "Chhatrapati Shivaji Maharaj International Airport (IATA: BOM, ICAO: VABB), formerly known as Sahar International Airport, is the primary international airport serving Mumbai, India. It is the second-busiest airport in India by total and international passenger traffic.",
          at: (19.0896, 72.8656), image: "Mumbai_Airport_Terminal_2.jpg", topics: ["india", "airport"]),
        a("Juhu", "Suburb of Mumbai",
          "Juhu (Marathi pronunciation: [d͡ʒuɦuː]) is an affluent suburb of Mumbai, India. It is known for Juhu Beach, which stretches for six kilometres along the Arabian Sea.",
          at: (19.0988, 72.8267), image: "Juhu_Beach_Mumbai.jpg", topics: ["india", "beach"]),
        a("Powai Lake", "Artificial lake in Mumbai",
          "Powai Lake is an artificial lake in Mumbai, situated in the Powai valley, where a suburb of the same name is situated. The lake was constructed in 1891 to supply drinking water to the city.",
          at: (19.127, 72.905), image: "Powai_Lake_Mumbai.jpg", topics: ["india", "lake"]),
        a("Bandra–Worli Sea Link", "Cable-stayed bridge in Mumbai",
          "The Bandra–Worli Sea Link (officially Rajiv Gandhi Sea Link) is a 5.6 km long, 8-lane wide cable-stayed bridge that links Bandra in the Western Suburbs of Mumbai with Worli in South Mumbai.",
          at: (19.038, 72.817), image: "Bandra_Worli_Sea_Link_Mumbai.jpg", topics: ["india", "bridge"]),
        a("Tivoli Gardens", "Amusement park in Copenhagen",
          "Tivoli Gardens (or simply Tivoli; Danish: [ˈtsʰiˀvoli]) is an amusement park and pleasure garden in Copenhagen, Denmark. The park opened on 15 August 1843 and is the third-oldest operating amusement park in the world.",
          at: (55.6737, 12.5681), image: "Tivoli_Gardens_-_Copenhagen.jpg", topics: ["denmark", "park"]),
        a("The Little Mermaid (statue)", "Bronze statue in Copenhagen",
          "The Little Mermaid (Danish: Den lille Havfrue) is a bronze statue by Edvard Eriksen, depicting a mermaid becoming human. The sculpture is displayed on a rock by the waterside at the Langelinie promenade in Copenhagen, Denmark.",
          at: (55.6929, 12.5993), image: "Copenhagen_-_the_little_mermaid_statue_-_2013.jpg", topics: ["denmark", "monument"]),
        a("Nyhavn", "Waterfront and canal in Copenhagen",
          "Nyhavn (Danish pronunciation: [ˈnyˌhɑwˀn]; 'New Harbour') is a 17th-century waterfront, canal and entertainment district in Copenhagen, Denmark. Stretching from Kongens Nytorv to the harbour front just south of the Royal Playhouse, it is lined by brightly coloured townhouses.",
          at: (55.6798, 12.5914), image: "Nyhavn_-_Copenhagen.jpg", topics: ["denmark", "street"]),
        a("Rosenborg Castle", "Renaissance castle in Copenhagen",
          "Rosenborg Castle (Danish: Rosenborg Slot, pronounced [ʁosn̩ˈpɒˀ ˈslʌt]) is a renaissance castle located in Copenhagen, Denmark. The castle was originally built as a country summerhouse in 1606 and is an example of Christian IV's many architectural projects.",
          at: (55.6858, 12.5773), image: "Rosenborg_Slot.jpg", topics: ["denmark", "castle"]),
        a("Prado Museum", "Art museum in Madrid, Spain",
          "The Prado Museum (/ˈprɑːdoʊ/ PRAH-doh; Spanish: Museo del Prado [muˈseo ðel ˈpɾaðo]), officially known as Museo Nacional del Prado, is the main Spanish national art museum, located in central Madrid.",
          at: (40.4138, -3.6921), image: "Museo_del_Prado_2016_(25185969599).jpg", topics: ["spain", "museum"]),
        a("Royal Palace of Madrid", "Official residence of the Spanish royal family",
          "The Royal Palace of Madrid (Spanish: Palacio Real de Madrid) is the official residence of the Spanish royal family at the city of Madrid, although now used only for state ceremonies.",
          at: (40.418, -3.7143), image: "Palacio_Real_de_Madrid_Julio_2016_(cropped).jpg", topics: ["spain", "castle"]),
        a("Buen Retiro Park", "Park in Madrid, Spain",
          "The Buen Retiro Park (Spanish: Parque del Buen Retiro, lit. 'Park of the Pleasant Retreat'), Retiro Park or simply El Retiro is one of the largest parks of the city of Madrid, Spain.",
          at: (40.4153, -3.6845), image: "Parque_del_Retiro_(Madrid)_06.jpg", topics: ["spain", "park"]),
        a("Puerta del Sol", "Public square in Madrid",
          "The Puerta del Sol (Spanish: [ˈpweɾta ðel ˈsol]; 'Gate of the Sun') is a public square in Madrid, one of the best known and busiest places in the city. This is the centre (Km 0) of the radial network of Spanish roads.",
          at: (40.4169, -3.7035), image: "Puerta_del_Sol_-_Madrid.jpg", topics: ["spain", "square"]),
        a("Apollo 11", "First crewed Moon landing (1969)",
          "Apollo 11 (July 16–24, 1969) was the American spaceflight that first landed humans on the Moon. Commander Neil Armstrong and Lunar Module Pilot Buzz Aldrin landed the Apollo Lunar Module Eagle on July 20, 1969.",
          image: "Aldrin_Apollo_11_original.jpg", topics: ["space"]),
        a("Mercury (planet)", "Smallest and closest planet to the Sun",
          "Mercury is the first planet from the Sun and the smallest in the Solar System. It is a rocky planet with a trace atmosphere and a surface gravity slightly higher than that of Mars.",
          image: "Mercury_in_true_color.jpg", topics: ["space", "mercury"]),
        a("Mercury (element)", "Chemical element with symbol Hg and atomic number 80",
          "Mercury is a chemical element; it has symbol Hg and atomic number 80. It is commonly known as quicksilver. A heavy, silvery d-block element, mercury is the only metallic element that is known to be liquid at standard temperature and pressure.",
          image: "Pouring_liquid_mercury_bionerd.jpg", topics: ["chemistry", "mercury"]),
        a("Mercury", nil, "Mercury most commonly refers to: Mercury (planet), the nearest planet to the Sun; Mercury (element), a metallic chemical element with the symbol Hg; Mercury (mythology), a Roman god.",
          topics: ["space", "chemistry", "mercury"], type: "disambiguation"),
        a("Amsterdam (disambiguation)", nil, "Amsterdam is the capital of the Netherlands. Amsterdam may also refer to: Amsterdam, New York; Amsterdam (film); Amsterdam (novel).",
          topics: ["netherlands", "city"], type: "disambiguation"),
        a("Madrid (disambiguation)", nil, "Madrid is the capital of Spain. Madrid may also refer to: Madrid, Iowa; Madrid, New Mexico; Real Madrid CF.",
          topics: ["spain", "city"], type: "disambiguation"),
        a("Curie", nil, "Curie may refer to: Marie Curie; Pierre Curie; the curie (unit), a unit of radioactivity.",
          topics: ["physics", "chemistry", "scientist"], type: "disambiguation"),
        a("Nuremberg trials", "Post-war military tribunals (1945–1946)",
          "The Nuremberg trials were held by the United States, the Soviet Union, the United Kingdom and France against representatives of the defeated Nazi Germany for plotting and carrying out invasions of other countries across Europe.",
          image: "Nuremberg_Trials_retouched.jpg", topics: ["history"]),
        a("Gettysburg Address", "1863 speech by Abraham Lincoln",
          "The Gettysburg Address is a speech delivered by Abraham Lincoln, the 16th U.S. president, following the Battle of Gettysburg during the American Civil War. The speech was delivered on the afternoon of November 19, 1863.",
          image: "Gettysburg_Address_(poster).jpg", topics: ["history"]),
        a("Suez Canal", "Artificial waterway in Egypt",
          "The Suez Canal (Arabic: قَنَاةُ ٱلسُّوَيْسِ, romanized: Qanāt as-Suways, Egyptian Arabic pronunciation: [ʔɑˈnæːt esˈsweːs]) is an artificial sea-level waterway in Egypt, connecting the Mediterranean Sea to the Red Sea through the Isthmus of Suez.",
          image: "Suez_Canal,_Egypt,_from_ISS.jpg", topics: ["history"]),
        a("UNESCO", "Specialised agency of the United Nations",
          "The United Nations Educational, Scientific and Cultural Organization (UNESCO /juːˈnɛskoʊ/ yoo-NESK-oh) is a specialized agency of the United Nations with the aim of promoting world peace and security through international cooperation in education, arts, sciences and culture.",
          image: "UNESCO_logo_English.svg", topics: ["history"]),
        // Pages outside the main namespace, which morelike answers may contain.
        a("Talk:Amsterdam", nil, "Discussion of the article Amsterdam.", topics: ["netherlands", "city"], ns: 1),
        a("Portal:Netherlands", nil, "The Netherlands portal.", topics: ["netherlands"], ns: 100),
        a("Category:Museums in Amsterdam", nil, "Museums located in Amsterdam.", topics: ["netherlands", "museum"], ns: 14),
        a("User:Example/Physics", nil, "A user's notes on physics.", topics: ["physics", "scientist"], ns: 2),
        a("Wikipedia:Featured articles", nil, "Featured articles are considered to be the best articles Wikipedia has to offer.", topics: ["space", "history", "computing"], ns: 4),
    ]

    static let german: [EmbeddedArticle] = [
        a("Amsterdam", "Hauptstadt der Niederlande",
          "Amsterdam [amstɐˈdam] (niederländisch [ɑmstərˈdɑm] ⓘ) ist die Hauptstadt des Königreichs der Niederlande. Sie liegt in der Provinz Nordholland an der Mündung der Amstel in das IJ.",
          at: (52.3725, 4.8925), image: "KeizersgrachtReguliersgrachtAmsterdam.jpg", topics: ["netherlands", "city"]),
        a("Kopenhagen", "Hauptstadt Dänemarks",
          "Kopenhagen (dänisch København [kʰøb̥m̩ˈhɑʊ̯ˀn] ⓘ) ist die Hauptstadt des Königreichs Dänemark und mit 660.842 Einwohnern die größte Stadt des Landes.",
          at: (55.6761, 12.5683), image: "Nyhavn_-_Copenhagen.jpg", topics: ["denmark", "city"]),
        a("Madrid", "Hauptstadt Spaniens",
          "Madrid [maˈdrɪt] (spanisch [maˈðɾið]) ist die Hauptstadt Spaniens und der Autonomen Gemeinschaft Madrid. Die Stadt ist mit rund 3,4 Millionen Einwohnern die größte Stadt Spaniens.",
          at: (40.4167, -3.7033), topics: ["spain", "city"]),
        a("Mumbai", "Hauptstadt des indischen Bundesstaates Maharashtra",
          "Mumbai [ˈmʊmbaɪ] (Marathi मुंबई Mumbaī [ˈmumbəi]), bis 1995 offiziell Bombay, ist die Hauptstadt des indischen Bundesstaates Maharashtra und mit rund 12,5 Millionen Einwohnern die bevölkerungsreichste Stadt Indiens.",
          at: (19.0761, 72.8775), topics: ["india", "city"]),
        a("Albert Einstein", "deutscher Physiker (1879–1955)",
          "Albert Einstein (* 14. März 1879 in Ulm; † 18. April 1955 in Princeton, New Jersey) war ein schweizerisch-US-amerikanischer theoretischer Physiker deutscher Herkunft. Er gilt als einer der bedeutendsten Physiker der Wissenschaftsgeschichte.",
          image: "Albert_Einstein_Head.jpg", topics: ["physics", "scientist"]),
        a("Rijksmuseum", "Nationalmuseum der Niederlande",
          "Das Rijksmuseum [ˈrɛiksmyˌzeːjʏm] ist das niederländische Nationalmuseum in Amsterdam. Es besitzt eine der bedeutendsten Sammlungen von Gemälden des Goldenen Zeitalters.",
          at: (52.36, 4.885), topics: ["netherlands", "museum"]),
        a("Tivoli (Kopenhagen)", "Vergnügungspark in Kopenhagen",
          "Der Tivoli (dänisch Tivoli [ˈtsʰiˀvoli]) ist ein Vergnügungspark im Zentrum von Kopenhagen. Er wurde am 15. August 1843 eröffnet.",
          at: (55.6737, 12.5681), topics: ["denmark", "park"]),
        a("Museo del Prado", "Kunstmuseum in Madrid",
          "Das Museo del Prado [muˈseo ðel ˈpɾaðo] in Madrid ist eines der größten und bedeutendsten Kunstmuseen der Welt.",
          at: (40.4138, -3.6921), topics: ["spain", "museum"]),
        a("Gateway of India", "Denkmal in Mumbai",
          "Das Gateway of India ist ein Triumphbogen in Mumbai, der 1924 fertiggestellt wurde.",
          at: (18.922, 72.8347), topics: ["india", "monument"]),
        a("Merkur", nil, "Merkur steht für: Merkur (Planet), der sonnennächste Planet; Merkur (Mythologie), ein römischer Gott.",
          topics: ["space", "mercury"], type: "disambiguation"),
        a("Merkur (Planet)", "sonnennächster Planet des Sonnensystems",
          "Der Merkur ist mit einem Durchmesser von knapp 4880 Kilometern der kleinste, sonnennächste und schnellste Planet im Sonnensystem.",
          topics: ["space", "mercury"]),
        a("Diskussion:Amsterdam", nil, "Diskussion zum Artikel Amsterdam.", topics: ["netherlands", "city"], ns: 1),
    ]

    /// The Chinese edition, written in one script and read in another: each article as stored (simplified, what the
    /// edition's default and zh-hans, zh-cn, zh-sg and zh-my read) and as MediaWiki's converter gives it to zh-hant,
    /// zh-tw, zh-hk and zh-mo (traditional). A title in either script finds the page.
    static let chinese: [(hans: EmbeddedArticle, hant: EmbeddedArticle)] = [
        (a("台湾", "东亚岛屿", "台湾是位于东亚的岛屿，西隔台湾海峡与中国大陆相望，东临太平洋。", at: (23.7, 121.0), topics: ["island"]),
         a("臺灣", "東亞島嶼", "臺灣是位於東亞的島嶼，西隔臺灣海峽與中國大陸相望，東臨太平洋。", at: (23.7, 121.0), topics: ["island"])),
        (a("阿姆斯特丹", "荷兰首都", "阿姆斯特丹是荷兰的首都及最大城市，以运河与博物馆闻名。", at: (52.3728, 4.8936), topics: ["city"]),
         a("阿姆斯特丹", "荷蘭首都", "阿姆斯特丹是荷蘭的首都及最大城市，以運河與博物館聞名。", at: (52.3728, 4.8936), topics: ["city"])),
        (a("阿尔伯特·爱因斯坦", "理论物理学家", "阿尔伯特·爱因斯坦是出生于德国的理论物理学家，以相对论闻名于世。", topics: ["physics"]),
         a("阿爾伯特·愛因斯坦", "理論物理學家", "阿爾伯特·愛因斯坦是出生於德國的理論物理學家，以相對論聞名於世。", topics: ["physics"])),
    ]

    /// The variants that read the traditional text.
    static let traditionalVariants: Set<String> = ["zh-hant", "zh-tw", "zh-hk", "zh-mo"]

    /// `article` (of the `lang` edition) as `variant` reads it: the zh edition's traditional text for a traditional
    /// variant, else as stored. Its title stays the stored one (the page's canonical title).
    static func reading(_ article: EmbeddedArticle, lang: String, variant: String?) -> EmbeddedArticle {
        guard lang == "zh", let variant, traditionalVariants.contains(variant),
              let pair = chinese.first(where: { $0.hans.title == article.title }) else { return article }
        var read = pair.hant
        read.pageid = article.pageid
        return read
    }

    /// A title in the other script of the zh edition → the stored title (MediaWiki finds a page by a title in any
    /// variant).
    static func storedTitle(_ title: String, lang: String) -> String {
        guard lang == "zh" else { return title }
        return chinese.first(where: { $0.hant.title == title })?.hans.title ?? title
    }

    static let italian: [EmbeddedArticle] = [
        a("Amsterdam", "capitale dei Paesi Bassi",
          "Amsterdam (AFI: /amsterˈdam/; in olandese [ˌɑmstərˈdɑm] ⓘ) è la capitale e maggiore città dei Paesi Bassi, situata nella provincia dell'Olanda Settentrionale.",
          at: (52.3725, 4.8925), image: "KeizersgrachtReguliersgrachtAmsterdam.jpg", topics: ["netherlands", "city"]),
        a("Copenaghen", "capitale della Danimarca",
          "Copenaghen (AFI: /kopeˈnaɡen/; in danese København, pronuncia [kʰøb̥m̩ˈhɑʊ̯ˀn]) è la capitale e la città più popolosa della Danimarca.",
          at: (55.6761, 12.5683), topics: ["denmark", "city"]),
        a("Madrid", "capitale della Spagna",
          "Madrid (pronuncia spagnola [maˈðɾið]) è la capitale e la città più popolosa della Spagna, nonché capoluogo dell'omonima comunità autonoma.",
          at: (40.4167, -3.7033), topics: ["spain", "city"]),
        a("Mumbai", "città dell'India",
          "Mumbai (AFI: /mumˈbai/; in marathi मुंबई, Mumbaī [ˈmumbəi]), conosciuta fino al 1995 come Bombay, è una metropoli dell'India, capitale dello stato del Maharashtra.",
          at: (19.0761, 72.8775), topics: ["india", "city"]),
        a("Albert Einstein", "fisico tedesco (1879-1955)",
          "Albert Einstein (pronuncia tedesca [ˈalbɛʁt ˈaɪ̯nʃtaɪ̯n] ⓘ; Ulma, 14 marzo 1879 – Princeton, 18 aprile 1955) è stato un fisico tedesco naturalizzato svizzero e statunitense.",
          image: "Albert_Einstein_Head.jpg", topics: ["physics", "scientist"]),
        a("Rijksmuseum", "museo nazionale dei Paesi Bassi",
          "Il Rijksmuseum (pronuncia olandese [ˈrɛiksmyˌzeːjʏm]) è il museo nazionale olandese, situato ad Amsterdam.",
          at: (52.36, 4.885), topics: ["netherlands", "museum"]),
        a("Museo del Prado", "museo d'arte di Madrid",
          "Il Museo del Prado (in spagnolo Museo Nacional del Prado, pronuncia [muˈseo ðel ˈpɾaðo]) è uno dei più importanti musei del mondo, situato a Madrid.",
          at: (40.4138, -3.6921), topics: ["spain", "museum"]),
        a("Sirenetta (Copenaghen)", "statua di Copenaghen",
          "La Sirenetta (in danese Den lille Havfrue) è una statua bronzea di Edvard Eriksen collocata sul lungomare di Langelinie a Copenaghen.",
          at: (55.6929, 12.5993), topics: ["denmark", "monument"]),
        a("Gateway of India", "monumento di Mumbai",
          "Il Gateway of India è un arco monumentale di Mumbai, completato nel 1924 sul lungomare della città.",
          at: (18.922, 72.8347), topics: ["india", "monument"]),
        a("Mercurio", nil, "Mercurio può riferirsi a: Mercurio, pianeta del sistema solare; Mercurio, elemento chimico; Mercurio, divinità romana.",
          topics: ["space", "mercury"], type: "disambiguation"),
        a("Mercurio (astronomia)", "pianeta del sistema solare",
          "Mercurio è il pianeta più interno del sistema solare e il più vicino al Sole. È il più piccolo e la sua orbita è anche la più eccentrica.",
          topics: ["space", "mercury"]),
        a("Discussione:Amsterdam", nil, "Discussione sulla voce Amsterdam.", topics: ["netherlands", "city"], ns: 1),
    ]
}
